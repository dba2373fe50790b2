// Accuracy benchmark over perturbed worlds: every world of world.ts (or the
// ones named) with the same number of devices, in worker threads, then each
// world's figures, their mean and their worst case, against the targets.
//
//   node --import tsx bench/accuracy/run.ts [--devices 50000] [--seed 1] [--world base --world 'rates x2' ...] [--threads 2] [--out results.json]
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { inWorkers } from './pool.js';
import type { WorldResult } from './simulate.js';
import { WORLDS } from './world.js';

const TARGETS = { recall: 0.97, falseMerge: 0.005, worstRecall: 0.95, worstFalseMerge: 0.01, privateOrCleared: 0.9, webkit: 0.85, ece: 0.03 };

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '50000' },
    seed: { type: 'string', default: '1' },
    world: { type: 'string', multiple: true },
    threads: { type: 'string', default: String(Math.min(2, availableParallelism())) },
    out: { type: 'string', default: new URL('./results.json', import.meta.url).pathname },
  },
});
const devices = Number(args.devices);
const seed = Number(args.seed);
const names = args.world?.length ? args.world : WORLDS.map((w) => w.name);

const started = performance.now();
const results = await inWorkers<WorldResult>(
  names.map((world) => ({ world, devices, seed })),
  Number(args.threads),
  (_, r) => console.error(`${r.world}: ${r.seconds}s`),
);
results.sort((a, b) => names.indexOf(a.world) - names.indexOf(b.world));

const pct = (x: number | null, d = 2) => (x === null || !Number.isFinite(x) ? '-' : `${(x * 100).toFixed(d)}%`);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const summary = results.map((r) => ({
  world: r.world,
  recall: r.overall.recall!,
  falseMerge: r.overall.falseMergeRate!,
  privateOrCleared: r.privateOrCleared.recall!,
  webkit: r.webkit.recall!,
  ece: r.ece,
  mergedDevices: r.overall.devicesWronglyMerged / r.devices,
  merges: r.overall.merges,
}));
const agg = {
  mean: {
    recall: mean(summary.map((s) => s.recall)),
    falseMerge: mean(summary.map((s) => s.falseMerge)),
    privateOrCleared: mean(summary.map((s) => s.privateOrCleared)),
    webkit: mean(summary.map((s) => s.webkit)),
    ece: mean(summary.map((s) => s.ece)),
  },
  worst: {
    recall: Math.min(...summary.map((s) => s.recall)),
    falseMerge: Math.max(...summary.map((s) => s.falseMerge)),
    privateOrCleared: Math.min(...summary.map((s) => s.privateOrCleared)),
    webkit: Math.min(...summary.map((s) => s.webkit)),
    ece: Math.max(...summary.map((s) => s.ece)),
  },
};

console.log(`deviceid accuracy: ${devices} devices per world, seed ${seed}, ${results.length} worlds, ${Math.round((performance.now() - started) / 1000)}s`);
table(
  'per world',
  ['world', 'recall', 'false merge', 'private/cleared', 'Safari/iOS', 'ECE', 'devices merged', 'heals'],
  summary.map((s) => [s.world, pct(s.recall), pct(s.falseMerge, 3), pct(s.privateOrCleared), pct(s.webkit), s.ece.toFixed(4), pct(s.mergedDevices), s.merges]),
);
table(
  'across worlds',
  ['', 'recall', 'false merge', 'private/cleared', 'Safari/iOS', 'ECE'],
  [
    ['mean', pct(agg.mean.recall), pct(agg.mean.falseMerge, 3), pct(agg.mean.privateOrCleared), pct(agg.mean.webkit), agg.mean.ece.toFixed(4)],
    ['worst', pct(agg.worst.recall), pct(agg.worst.falseMerge, 3), pct(agg.worst.privateOrCleared), pct(agg.worst.webkit), agg.worst.ece.toFixed(4)],
    [
      'target',
      `≥${pct(TARGETS.recall, 0)} (worst ≥${pct(TARGETS.worstRecall, 0)})`,
      `≤${pct(TARGETS.falseMerge, 1)} (worst ≤${pct(TARGETS.worstFalseMerge, 0)})`,
      `≥${pct(TARGETS.privateOrCleared, 0)}`,
      `≥${pct(TARGETS.webkit, 0)}`,
      `≤${TARGETS.ece}`,
    ],
  ],
);
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
  `${JSON.stringify({ config: { devices, seed, worlds: names }, targets: TARGETS, summary, aggregate: agg, worlds: results }, null, 2)}\n`,
);

function table(title: string, header: string[], rows: (string | number)[][]) {
  const all = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  console.log(`\n${title}`);
  for (const r of all) console.log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
}
