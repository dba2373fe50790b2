// Accuracy benchmark over perturbed worlds: every world of world.ts (or the
// ones named) with the same number of devices, in worker threads, then each
// world's figures, their mean and their worst case, against the targets;
// each world as a site without and with the first-party proxy integration
// (its server-set device cookie), and the oracle's ceiling on the same visits.
// With `--linked both`, each also with the project's linkedId setting off and
// on (signIns.ts): the tables above are the setting's last mode, and one more
// compares them world by world. `--related-worlds` adds the worlds with
// several browsers per device (world.ts RELATED_WORLDS) to every world.
//
//   node --import tsx bench/accuracy/run.ts [--devices 50000] [--seed 1] [--world base --world 'rates x2' ...] [--related-worlds]
//     [--integration both|off|on] [--linked on|off|both] [--no-oracle] [--threads 2] [--out results.json]
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { inWorkers } from './pool.js';
import type { OracleResult } from './oracle.js';
import type { WorldResult } from './simulate.js';
import { RELATED_WORLDS, WORLDS } from './world.js';

const TARGETS = { recall: 0.97, falseMerge: 0.005, worstRecall: 0.95, worstFalseMerge: 0.01, privateOrCleared: 0.9, webkit: 0.85, itpExpired: 0.9, ece: 0.03 };

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '50000' },
    seed: { type: 'string', default: '1' },
    world: { type: 'string', multiple: true },
    'related-worlds': { type: 'boolean', default: false },
    integration: { type: 'string', default: 'both' },
    linked: { type: 'string', default: 'on' },
    'no-oracle': { type: 'boolean', default: false },
    threads: { type: 'string', default: String(Math.min(2, availableParallelism())) },
    out: { type: 'string', default: new URL('./results.json', import.meta.url).pathname },
  },
});
const devices = Number(args.devices);
const seed = Number(args.seed);
const names = args.world?.length ? args.world : [...WORLDS, ...(args['related-worlds'] ? RELATED_WORLDS : [])].map((w) => w.name);
const MODES = { off: [false], on: [true], both: [false, true] } as Record<string, boolean[]>;
const modes = MODES[args.integration];
if (!modes) throw new Error('--integration both|off|on');
const linkedModes = MODES[args.linked];
if (!linkedModes) throw new Error('--linked on|off|both');
const mainLinked = linkedModes[linkedModes.length - 1]!;
const withOracle = !args['no-oracle'];
const label = (integration: boolean) => (integration ? 'proxy' : 'direct');

const started = performance.now();
const everyRun = await inWorkers<WorldResult & { oracle?: OracleResult }>(
  names.flatMap((world) => modes.flatMap((integration) => linkedModes.map((linked) => ({ world, devices, seed, integration, linked, withOracle })))),
  Number(args.threads),
  (_, r) => console.error(`${r.world} (${label(r.integration)}, linkedId ${r.linked ? 'on' : 'off'}): ${r.seconds}s`),
);
everyRun.sort(
  (a, b) => names.indexOf(a.world) - names.indexOf(b.world) || Number(a.integration) - Number(b.integration) || Number(a.linked) - Number(b.linked),
);
const results = everyRun.filter((r) => r.linked === mainLinked);

const pct = (x: number | null, d = 2) => (x === null || !Number.isFinite(x) ? '-' : `${(x * 100).toFixed(d)}%`);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const summary = results.map((r) => ({
  world: r.world,
  integration: r.integration,
  oracle: r.oracle?.recall ?? null,
  oracleWebkit: r.oracle?.webkit ?? null,
  oracleItp: r.oracle?.itpExpired ?? null,
  recall: r.overall.recall!,
  falseMerge: r.overall.falseMergeRate!,
  privateOrCleared: r.privateOrCleared.recall!,
  webkit: r.webkit.recall!,
  itpExpired: r.byDrift.itpExpired!.recall,
  ece: r.ece,
  mergedDevices: r.overall.devicesWronglyMerged / r.devices,
  merges: r.overall.merges,
}));
const numbers = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null && Number.isFinite(x));
const aggregate = (rows: typeof summary) => {
  const col = (k: 'oracle' | 'oracleWebkit' | 'oracleItp' | 'recall' | 'falseMerge' | 'privateOrCleared' | 'webkit' | 'itpExpired' | 'ece') =>
    numbers(rows.map((s) => s[k]));
  const lowest = (xs: number[]) => (xs.length ? Math.min(...xs) : null);
  const highest = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  const avg = (xs: number[]) => (xs.length ? mean(xs) : null);
  return {
    mean: {
      oracle: avg(col('oracle')),
      oracleWebkit: avg(col('oracleWebkit')),
      oracleItp: avg(col('oracleItp')),
      recall: avg(col('recall'))!,
      falseMerge: avg(col('falseMerge'))!,
      privateOrCleared: avg(col('privateOrCleared'))!,
      webkit: avg(col('webkit'))!,
      itpExpired: avg(col('itpExpired')),
      ece: avg(col('ece'))!,
    },
    worst: {
      oracle: lowest(col('oracle')),
      oracleWebkit: lowest(col('oracleWebkit')),
      oracleItp: lowest(col('oracleItp')),
      recall: lowest(col('recall'))!,
      falseMerge: highest(col('falseMerge'))!,
      privateOrCleared: lowest(col('privateOrCleared'))!,
      webkit: lowest(col('webkit'))!,
      itpExpired: lowest(col('itpExpired')),
      ece: highest(col('ece'))!,
    },
  };
};
const agg = Object.fromEntries(modes.map((m) => [label(m), aggregate(summary.filter((s) => s.integration === m))]));

console.log(
  `deviceid accuracy: ${devices} devices per world, seed ${seed}, ${names.length} worlds × ${modes.map(label).join(' and ')}, ${Math.round((performance.now() - started) / 1000)}s`,
);
table(
  'per world (site without / with the first-party proxy integration)',
  ['world', 'site', 'oracle', 'recall', 'false merge', 'private/cleared', 'Safari/iOS', 'ITP-deleted', 'oracle Safari/iOS', 'ECE', 'devices merged', 'heals'],
  summary.map((s) => [
    s.world,
    label(s.integration),
    pct(s.oracle),
    pct(s.recall),
    pct(s.falseMerge, 3),
    pct(s.privateOrCleared),
    pct(s.webkit),
    pct(s.itpExpired),
    pct(s.oracleWebkit),
    s.ece.toFixed(4),
    pct(s.mergedDevices),
    s.merges,
  ]),
);
table(
  'across worlds',
  ['', 'oracle', 'recall', 'false merge', 'private/cleared', 'Safari/iOS', 'ITP-deleted', 'ECE'],
  [
    ...modes.flatMap((m) => {
      const a = agg[label(m)]!;
      return [
        [
          `mean, ${label(m)}`,
          pct(a.mean.oracle),
          pct(a.mean.recall),
          pct(a.mean.falseMerge, 3),
          pct(a.mean.privateOrCleared),
          pct(a.mean.webkit),
          pct(a.mean.itpExpired),
          a.mean.ece.toFixed(4),
        ],
        [
          `worst, ${label(m)}`,
          pct(a.worst.oracle),
          pct(a.worst.recall),
          pct(a.worst.falseMerge, 3),
          pct(a.worst.privateOrCleared),
          pct(a.worst.webkit),
          pct(a.worst.itpExpired),
          a.worst.ece.toFixed(4),
        ],
      ];
    }),
    [
      'target',
      '',
      `≥${pct(TARGETS.recall, 0)} (worst ≥${pct(TARGETS.worstRecall, 0)})`,
      `≤${pct(TARGETS.falseMerge, 1)} (worst ≤${pct(TARGETS.worstFalseMerge, 0)})`,
      `≥${pct(TARGETS.privateOrCleared, 0)}`,
      `≥${pct(TARGETS.webkit, 0)}`,
      `≥${pct(TARGETS.itpExpired, 0)} (proxy)`,
      `≤${TARGETS.ece}`,
    ],
  ],
);
const gapped = results.filter((r) => r.gap);
if (gapped.length) {
  const sum = (rs: typeof gapped, f: (g: NonNullable<WorldResult['gap']>) => Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const r of rs) for (const [c, n] of Object.entries(f(r.gap!))) out[c] = (out[c] ?? 0) + n;
    return out;
  };
  const byMode = modes.map((m) => gapped.filter((r) => r.integration === m));
  const totals = byMode.map((rs) => sum(rs, (g) => g.causes));
  const missed = byMode.map((rs) => rs.reduce((t, r) => t + r.gap!.missed, 0));
  const causes = [...new Set(totals.flatMap((t) => Object.keys(t)))].sort((a, b) => (totals[0]![b] ?? 0) - (totals[0]![a] ?? 0));
  table(
    'gap to the oracle by cause: revisits the oracle recalls and the linker does not, all worlds',
    ['cause', ...modes.flatMap((m) => [label(m), 'share'])],
    causes.map((c) => [c, ...totals.flatMap((t, j) => [t[c] ?? 0, pct((t[c] ?? 0) / missed[j]!, 1)])]),
  );
  table(
    'gap by world',
    ['world', 'site', 'oracle', 'linker', 'gap', 'missed', 'beyond oracle', 'heals', 'split devices', 'never healed', 'largest cause'],
    gapped.map((r) => {
      const g = r.gap!;
      const [top, n] = Object.entries(g.causes)[0] ?? ['-', 0];
      return [
        r.world,
        label(r.integration),
        pct(r.oracle!.recall),
        pct(r.overall.recall),
        `${((r.oracle!.recall - r.overall.recall!) * 100).toFixed(2)} pt`,
        g.missed,
        g.beyondOracle,
        r.overall.merges,
        g.splitDevices,
        g.neverHealedDevices,
        `${top} (${n})`,
      ];
    }),
  );
  byMode.forEach((rs, j) => {
    const drifts = ['none', ...new Set(rs.flatMap((r) => Object.keys(r.gap!.byDrift)))].filter((d, i, xs) => xs.indexOf(d) === i);
    const perDrift = Object.fromEntries(drifts.map((d) => [d, sum(rs, (g) => g.byDrift[d] ?? {})]));
    const top = causes.filter((c) => totals[j]![c]).slice(0, 7);
    table(
      `gap by drift, all worlds, ${label(modes[j]!)} (a revisit can carry several drifts)`,
      ['drift', 'missed', ...top, 'other'],
      drifts.map((d) => {
        const row = perDrift[d]!;
        const all = Object.values(row).reduce((a, b) => a + b, 0);
        return [d, all, ...top.map((c) => row[c] ?? 0), all - top.reduce((t, c) => t + (row[c] ?? 0), 0)];
      }),
    );
  });
}
if (linkedModes.length > 1) {
  const pair = (r: WorldResult) => everyRun.find((x) => x.world === r.world && x.integration === r.integration && !x.linked)!;
  const both = results.map((on) => ({ on, off: pair(on) }));
  const row = (name: string, site: string, rs: { on: WorldResult; off: WorldResult }[]) => {
    const m = (f: (r: WorldResult) => number | null) => (x: 'on' | 'off') => mean(numbers(rs.map((p) => f(p[x]))));
    const cols = [
      m((r) => r.overall.recall),
      m((r) => r.overall.falseMergeRate),
      m((r) => r.privateOrCleared.recall),
      m((r) => r.signedIn.recall),
      m((r) => r.signedIn.falseMergeRate),
      m((r) => r.sameAccountMerges),
    ];
    return [
      name,
      site,
      ...cols.flatMap((c, i) => {
        const [off, on] = [c('off'), c('on')];
        return i === 5
          ? [`${Number(off.toFixed(1))} → ${Number(on.toFixed(1))}`]
          : [`${pct(off, i === 1 || i === 4 ? 3 : 2)} → ${pct(on, i === 1 || i === 4 ? 3 : 2)}`];
      }),
    ];
  };
  table(
    "the customer's linkedId as evidence: the project's setting off → on",
    ['world', 'site', 'recall', 'false merge', 'private/cleared', 'signed-in recall', 'signed-in false merge', 'same-account merged visits'],
    [
      ...both.map((p) => row(p.on.world, label(p.on.integration), [p])),
      ...modes.map((mode) =>
        row(
          'mean',
          label(mode),
          both.filter((p) => p.on.integration === mode),
        ),
      ),
    ],
  );
}
const base = results[0]!;
const cells = (r: WorldResult['byKind'][string]) => [r.devices, r.events, r.revisits, pct(r.recall), pct(r.falseMergeRate, 3), r.devicesWronglyMerged];
const HEADER = ['devices', 'events', 'revisits', 'recall', 'false merge', 'merged dev'];
table(
  `${base.world}: by match kind`,
  ['kind', ...HEADER],
  Object.entries(base.byKind).map(([k, r]) => [k, ...cells(r)]),
);
table(
  `${base.world}: by drift (revisits carrying it; a visit can carry several)`,
  ['drift', ...HEADER],
  Object.entries(base.byDrift).map(([k, r]) => [k, ...cells(r)]),
);
table(
  `${base.world}: by cohort`,
  ['cohort', ...HEADER],
  Object.entries(base.byCohort).map(([k, r]) => [k, ...cells(r)]),
);
table(
  `${base.world}: reliability`,
  ['confidence', 'events', 'mean confidence', 'accuracy'],
  base.reliability.map((b) => [`${b.from.toFixed(1)}–${b.to.toFixed(1)}`, b.events, b.meanConfidence ?? '-', b.accuracy ?? '-']),
);

writeFileSync(
  args.out,
  `${JSON.stringify({ config: { devices, seed, worlds: names, integration: modes.map(label), linked: linkedModes }, targets: TARGETS, summary, aggregate: agg, worlds: everyRun }, null, 2)}\n`,
);

function table(title: string, header: string[], rows: (string | number)[][]) {
  const all = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  console.log(`\n${title}`);
  for (const r of all) console.log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
}
