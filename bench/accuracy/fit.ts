// Fits the weights of the evidence model (server/identification/evidence.ts)
// by maximum likelihood on the fingerprint decisions of many worlds: a
// conditional logit over each decision's candidates and "a new device"
// (utility 0), where the right alternative is the candidate the visiting
// device created, or a new device when none is. An L2 penalty holds each
// weight near its Bayesian value (1 for each log-ratio), so a weight moves
// only as far as the data across all worlds asks. The decisions depend on
// the weights they were made with, so run it again after changing them.
//
//   node --import tsx bench/accuracy/fit.ts [--devices 5000] [--seeds 11,12] [--write]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_WEIGHTS, FEATURES, type Features, type Weights } from '../../server/identification/evidence.js';
import { inWorkers } from './pool.js';
import { weightsModule } from './weightsModule.js';
import type { Choice } from './worker.js';
import { WORLDS } from './world.js';

const { values: args } = parseArgs({
  options: {
    devices: { type: 'string', default: '5000' },
    seeds: { type: 'string', default: '11,12' },
    threads: { type: 'string', default: '2' },
    penalty: { type: 'string', default: '0.001' },
    write: { type: 'boolean', default: false },
  },
});
const seeds = args.seeds.split(',').map(Number);
const jobs = seeds.flatMap((seed) => WORLDS.map((w) => ({ world: w.name, devices: Number(args.devices), seed, collect: true })));
const runs = await inWorkers<{ choices: Choice[] }>(jobs, Number(args.threads), (j) => console.error(`collected ${String(j.world)} seed ${String(j.seed)}`));
const all = runs.flatMap((r) => r.choices);
const finite = (c: Choice) => c.candidates.every((x) => Object.values(x.f).every(Number.isFinite));
const choices = all.filter(finite);
if (choices.length < all.length) {
  const bad = all.find((c) => !finite(c))!;
  console.error(`${all.length - choices.length} decisions with non-finite features dropped, e.g. ${JSON.stringify(bad.candidates.map((x) => x.f))}`);
}
console.error(`${choices.length} decisions, ${choices.reduce((n, c) => n + c.candidates.length, 0)} candidates`);

const KEYS = ['bias', ...FEATURES] as const;
const vec = (f: Features) => [1, ...FEATURES.map((k) => f[k])];
const data = choices.map((c) => ({ xs: c.candidates.map((x) => vec(x.f)), right: c.candidates.map((x) => x.right), none: !c.candidates.some((x) => x.right) }));
const prior = KEYS.map((k) => DEFAULT_WEIGHTS[k]);
// Signs the model's derivation fixes: a log-ratio counts for what it says (≥ 0), a change of the
// fingerprint never counts for a candidate (≤ 0). A weight the data pushes across is held at 0.
const sign = KEYS.map((k) =>
  ['prior', 'rarity', 'storage', 'prefixEvidence', 'asnEvidence', 'moved'].includes(k) ? 1 : k.startsWith('changed') && k !== 'changedVersion' ? -1 : 0,
);
const scale = KEYS.map(() => 1);

function objective(w: number[]): { ll: number; grad: number[] } {
  const grad = w.map(() => 0);
  let ll = 0;
  for (const d of data) {
    const s = d.xs.map((x) => x.reduce((t, xi, i) => t + xi * w[i]!, 0));
    const max = Math.max(0, ...s);
    const e = s.map((si) => Math.exp(si - max));
    const z = Math.exp(-max) + e.reduce((a, b) => a + b, 0);
    const r = (d.none ? Math.exp(-max) : 0) + e.reduce((a, ei, i) => a + (d.right[i] ? ei : 0), 0);
    ll += Math.log(r) - Math.log(z);
    d.xs.forEach((x, c) => {
      const g = (d.right[c] ? e[c]! / r : 0) - e[c]! / z;
      x.forEach((xi, i) => (grad[i]! += g * xi));
    });
  }
  const lambda = Number(args.penalty) * data.length;
  w.forEach((wi, i) => {
    const dev = (wi - prior[i]!) / scale[i]!;
    ll -= lambda * dev * dev;
    grad[i]! -= (2 * lambda * dev) / scale[i]!;
  });
  return { ll, grad };
}

// Adam, full batch.
let w = [...prior];
const m = w.map(() => 0);
const v = w.map(() => 0);
for (let t = 1; t <= 400; t++) {
  const { ll, grad } = objective(w);
  w = w.map((wi, i) => {
    const g = -grad[i]! / data.length;
    m[i] = 0.9 * m[i]! + 0.1 * g;
    v[i] = 0.999 * v[i]! + 0.001 * g * g;
    const step = (0.05 * scale[i]! * (m[i] / (1 - 0.9 ** t))) / (Math.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-8);
    const next = wi - step;
    return sign[i] === 1 ? Math.max(0, next) : sign[i] === -1 ? Math.min(0, next) : next;
  });
  if (t % 100 === 0) console.error(`iteration ${t}: mean log-likelihood ${(ll / data.length).toFixed(4)}`);
}
const fitted = Object.fromEntries(KEYS.map((k, i) => [k, Math.round(w[i]! * 1000) / 1000])) as unknown as Weights;
console.log(JSON.stringify(fitted));
if (args.write) {
  const file = new URL('../../server/identification/weights.ts', import.meta.url);
  writeFileSync(file, weightsModule(fitted, `${choices.length} decisions, ${WORLDS.length} worlds × seeds ${seeds.join(', ')}, ${args.devices} devices each`));
  console.error(`wrote ${file.pathname}`);
}
