// Fits confidence (server/identification/calibration.ts): per decision path,
// an isotonic regression of "the answer was right" on the decision's own
// probability (Match.p), over the decisions of every world and of
// populations drawn at random around each (world.ts perturbedPopulation:
// every rate, look-alike share and network share ×0.5–2), compressed to at
// most 24 knots. Whether it transfers: each world is left out in turn with
// its random populations, the fit made on the others, and the expected
// calibration error and every bucket's gap measured on the ones left out
// (a probability model is only as good as its worst world).
//
//   node --import tsx bench/accuracy/calibrate.ts [--devices 3000] [--seeds 51] [--populations 1] [--write]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { confidenceOf } from '../../server/identification/confidence.js';
import type { MatchKind } from '../../server/identification/linker.js';
import { inWorkers } from './pool.js';
import { calibrationOf, type Decision, type WorldResult } from './simulate.js';
import { WORLDS } from './world.js';

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '3000' },
    seeds: { type: 'string', default: '51' },
    /** Random populations drawn around each world, per seed. */
    populations: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2' },
    write: { type: 'boolean', default: false },
  },
});
const seeds = args.seeds.split(',').map(Number);
const populations = Number(args.populations);
/** A world's family: itself and the populations drawn around it (left out together). */
const family = (name: string) => name.replace(/ ≈\d+$/, '');
const names = seeds.flatMap((seed) =>
  WORLDS.flatMap((w, i) => [
    { world: w.name, seed },
    ...Array.from({ length: populations }, (_, k) => ({ world: `${w.name} ≈${seed * 1000 + i * populations + k}`, seed })),
  ]),
);
const jobs = names.map((n) => ({ ...n, devices: Number(args.devices), keepDecisions: true }));
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

// Leave one world out: fitted on the other worlds and their populations, judged on it and on its own.
console.log('\nleave one world out (fitted on the other worlds and their random populations, measured on each one left out)');
console.log('  world                               decisions     ECE  buckets ≥100 off >5 pts  largest gap (bucket, decisions)');
const held: { world: string; ece: number; gap: number; off: number }[] = [];
for (const w of WORLDS) {
  const others = fit(runs.filter((r) => family(r.world) !== w.name).flatMap((r) => r.decisions ?? []));
  for (const run of runs.filter((r) => family(r.world) === w.name)) {
    const judged = (run.decisions ?? []).map((d) => ({ ...d, confidence: confidenceOf(d, others) }));
    const { ece, reliability } = calibrationOf(judged);
    const gaps = reliability
      .filter((b) => b.events >= 100)
      .map((b) => ({ b, gap: Math.abs(b.accuracy! - b.meanConfidence!) }))
      .sort((x, y) => y.gap - x.gap);
    const worst = gaps[0];
    const off = gaps.filter((g) => g.gap > 0.05).length;
    held.push({ world: run.world, ece, gap: worst?.gap ?? 0, off });
    console.log(
      `  ${run.world.padEnd(34)}  ${String(judged.length).padStart(9)}  ${ece.toFixed(4)}  ${String(off).padStart(23)}  ${worst ? `${worst.gap.toFixed(3)} (${worst.b.from.toFixed(1)}–${worst.b.to.toFixed(1)}, ${worst.b.events})` : '-'}`,
    );
  }
}
const meanEce = held.reduce((t, h) => t + h.ece, 0) / held.length;
console.log(
  `  mean ECE ${meanEce.toFixed(4)}, worst ${Math.max(...held.map((h) => h.ece)).toFixed(4)}; ECE ≤ 0.02 in ${held.filter((h) => h.ece <= 0.02).length} of ${held.length}; ` +
    `no bucket of 100 decisions or more off by more than 5 points in ${held.filter((h) => h.off === 0).length} of ${held.length}; both in ${held.filter((h) => h.ece <= 0.02 && h.off === 0).length} (issue 36's target: all)`,
);
// How far apart the worlds are where no input of the decision tells them apart: accuracy per decision path and probability range.
console.log('\naccuracy by decision path and probability, across worlds and populations (ranges of 100 decisions or more)');
const edges = [0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.98, 0.995, 1.0001];
for (const kind of ['token', 'exact', 'fuzzy', 'new'] as MatchKind[]) {
  for (let b = 0; b < edges.length - 1; b++) {
    const acc = runs
      .map((r) => (r.decisions ?? []).filter((d) => d.kind === kind && d.p >= edges[b]! && d.p < edges[b + 1]!))
      .filter((ds) => ds.length >= 100)
      .map((ds) => ds.filter((d) => d.correct).length / ds.length)
      .sort((x, y) => x - y);
    if (acc.length < 2) continue;
    console.log(
      `  ${kind.padEnd(5)} p ${edges[b]!.toFixed(3)}–${Math.min(1, edges[b + 1]!).toFixed(3)}: ${acc.length} worlds, accuracy ${acc[0]!.toFixed(3)} … median ${acc[acc.length >> 1]!.toFixed(3)} … ${acc[acc.length - 1]!.toFixed(3)}`,
    );
  }
}
if (args.write) {
  const body = Object.entries(table)
    .map(([k, v]) => `  ${k}: [${v.map(([x, y]) => `[${x}, ${y}]`).join(', ')}],`)
    .join('\n');
  const file = new URL('../../server/identification/calibration.ts', import.meta.url);
  writeFileSync(
    file,
    `// Generated by bench/accuracy/calibrate.ts (${decisions.length} decisions, ${WORLDS.length} worlds and ${populations} random population${populations === 1 ? '' : 's'} around each × seeds ${seeds.join(', ')}, ${args.devices} devices each):\n// (decision probability, P(right)) knots per decision path, an isotonic fit.\nimport type { MatchKind } from './linker.js';\n\nexport const CALIBRATION: Record<MatchKind, readonly (readonly [number, number])[]> = {\n${body}\n};\n`,
  );
  console.error(`wrote ${file.pathname}`);
}
