// Fits confidence (server/identification/calibration.ts): per decision path,
// an isotonic regression of "the answer was right" on the decision's own
// probability (Match.p), over the decisions of every world on the given
// seeds, compressed to at most 24 knots. Check it on other seeds: run.ts
// reports the expected calibration error per world. Whether it transfers:
// each world is left out in turn, the fit made on the others, and the
// expected calibration error and the largest bucket gap measured on the
// world left out (a probability model is only as good as its worst world).
//
//   node --import tsx bench/accuracy/calibrate.ts [--devices 4000] [--seeds 11,12] [--write]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { confidenceOf } from '../../server/identification/confidence.js';
import type { MatchKind } from '../../server/identification/linker.js';
import { inWorkers } from './pool.js';
import { calibrationOf, type Decision, type WorldResult } from './simulate.js';
import { WORLDS } from './world.js';

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '4000' },
    seeds: { type: 'string', default: '11,12' },
    threads: { type: 'string', default: '2' },
    write: { type: 'boolean', default: false },
  },
});
const seeds = args.seeds.split(',').map(Number);
const jobs = seeds.flatMap((seed) => WORLDS.map((w) => ({ world: w.name, devices: Number(args.devices), seed, keepDecisions: true })));
const runs = await inWorkers<WorldResult>(jobs, Number(args.threads), (j) => console.error(`collected ${String(j.world)} seed ${String(j.seed)}`));
const decisions = runs.flatMap((r) => r.decisions ?? []);

/** Pool-adjacent-violators: a non-decreasing fit of y on sorted x, as blocks (x range, mean y, weight). */
export function isotonic(points: { x: number; y: number }[]) {
  // Equal x are one observation of their mean (else their order would decide the fit).
  const byX = new Map<number, { sum: number; n: number }>();
  for (const p of points) {
    const t = byX.get(p.x) ?? byX.set(p.x, { sum: 0, n: 0 }).get(p.x)!;
    t.sum += p.y;
    t.n++;
  }
  const sorted = [...byX.entries()].sort((a, b) => a[0] - b[0]);
  const blocks: { lo: number; hi: number; sum: number; n: number }[] = [];
  for (const [x, t] of sorted) {
    blocks.push({ lo: x, hi: x, sum: t.sum, n: t.n });
    while (
      blocks.length > 1 &&
      blocks[blocks.length - 2]!.sum / blocks[blocks.length - 2]!.n >= blocks[blocks.length - 1]!.sum / blocks[blocks.length - 1]!.n
    ) {
      const b = blocks.pop()!;
      const a = blocks[blocks.length - 1]!;
      a.hi = b.hi;
      a.sum += b.sum;
      a.n += b.n;
    }
  }
  return blocks.map((b) => ({ x: (b.lo + b.hi) / 2, y: b.sum / b.n, n: b.n }));
}

/**
 * At most `max` knots, none resting on fewer than `minN` decisions: the
 * smallest block merges into its smaller neighbour (weighted means of
 * neighbouring isotonic blocks stay monotone) until both hold.
 */
function compress(knots: { x: number; y: number; n: number }[], max: number, minN: number) {
  const k = [...knots];
  while (k.length > 1) {
    let i = 0;
    for (let j = 1; j < k.length; j++) if (k[j]!.n < k[i]!.n) i = j;
    if (k.length <= max && k[i]!.n >= minN) break;
    const j = i === 0 ? 1 : i === k.length - 1 ? i - 1 : k[i - 1]!.n <= k[i + 1]!.n ? i - 1 : i + 1;
    const [lo, hi] = i < j ? [i, j] : [j, i];
    const a = k[lo]!;
    const b = k[hi]!;
    k.splice(lo, 2, { x: (a.x * a.n + b.x * b.n) / (a.n + b.n), y: (a.y * a.n + b.y * b.n) / (a.n + b.n), n: a.n + b.n });
  }
  return k;
}

/** The calibration table fitted on these decisions. */
function fit(decisions: Decision[]): Record<MatchKind, [number, number][]> {
  const table = {} as Record<MatchKind, [number, number][]>;
  for (const kind of ['token', 'exact', 'fuzzy', 'new'] as MatchKind[]) {
    const pts = decisions.filter((d) => d.kind === kind).map((d) => ({ x: d.p, y: d.correct ? 1 : 0 }));
    const knots = compress(isotonic(pts), 24, Math.max(50, pts.length / 200));
    table[kind] = knots.map((k) => [Math.round(k.x * 1e4) / 1e4, Math.round(k.y * 1e4) / 1e4]);
  }
  return table;
}

const table = fit(decisions);
for (const [kind, knots] of Object.entries(table)) console.log(kind, decisions.filter((d) => d.kind === kind).length, JSON.stringify(knots));

// Leave one world out: fitted on the others, judged on it.
console.log('\nleave one world out (fitted on the other worlds, measured on the one left out)');
console.log('  world                 decisions     ECE  largest bucket gap (bucket, decisions)');
const held: { world: string; ece: number; gap: number }[] = [];
for (const w of WORLDS) {
  const inWorld = runs.filter((r) => r.world === w.name);
  const others = fit(runs.filter((r) => r.world !== w.name).flatMap((r) => r.decisions ?? []));
  const judged = inWorld.flatMap((r) => r.decisions ?? []).map((d) => ({ ...d, confidence: confidenceOf(d, others) }));
  const { ece, reliability } = calibrationOf(judged);
  const worst = reliability
    .filter((b) => b.events >= 50)
    .map((b) => ({ b, gap: Math.abs(b.accuracy! - b.meanConfidence!) }))
    .sort((x, y) => y.gap - x.gap)[0];
  held.push({ world: w.name, ece, gap: worst?.gap ?? 0 });
  console.log(
    `  ${w.name.padEnd(20)}  ${String(judged.length).padStart(9)}  ${ece.toFixed(4)}  ${worst ? `${worst.gap.toFixed(3)} (${worst.b.from.toFixed(1)}–${worst.b.to.toFixed(1)}, ${worst.b.events})` : '-'}`,
  );
}
const meanEce = held.reduce((t, h) => t + h.ece, 0) / held.length;
console.log(
  `  mean ECE ${meanEce.toFixed(4)}, worst ${Math.max(...held.map((h) => h.ece)).toFixed(4)}; largest bucket gap ${Math.max(...held.map((h) => h.gap)).toFixed(3)} (buckets of 50 decisions or more; target ECE ≤ 0.03, gap ≤ 0.08)`,
);
if (args.write) {
  const body = Object.entries(table)
    .map(([k, v]) => `  ${k}: [${v.map(([x, y]) => `[${x}, ${y}]`).join(', ')}],`)
    .join('\n');
  const file = new URL('../../server/identification/calibration.ts', import.meta.url);
  writeFileSync(
    file,
    `// Generated by bench/accuracy/calibrate.ts (${decisions.length} decisions, ${WORLDS.length} worlds × seeds ${seeds.join(', ')}, ${args.devices} devices each):\n// (decision probability, P(right)) knots per decision path, an isotonic fit.\nimport type { MatchKind } from './linker.js';\n\nexport const CALIBRATION: Record<MatchKind, readonly (readonly [number, number])[]> = {\n${body}\n};\n`,
  );
  console.error(`wrote ${file.pathname}`);
}
