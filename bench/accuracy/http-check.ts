// The benchmark's in-memory index against the real service: one world's
// visits replayed through HTTP (identify with the visit's address in
// X-Forwarded-For, the server's clock set to the visit's time) on a real
// database, and the visitors it gives compared with the in-memory run's.
// Both must agree visit for visit (up to the names of the visitors), and
// give the same recall and false merges.
//
//   node --import tsx bench/accuracy/http-check.ts [--devices 300] [--seed 5] [--world base]
import { parseArgs } from 'node:util';
import { ManualClock } from '../../server/clock.js';
import { identifyBody } from '../../test/support/signals.js';
import { startService } from '../support/service.js';
import { simulate, worldOf, type SimVisit } from './simulate.js';
import { worldNamed } from './world.js';

const { values: args } = parseArgs({
  options: { devices: { type: 'string', default: '300' }, seed: { type: 'string', default: '5' }, world: { type: 'string', default: 'base' } },
});
const world = worldNamed(args.world);
const n = Number(args.devices);
const seed = Number(args.seed);

// 1. In memory.
const memory: string[] = [];
const memResult = await simulate(world, n, seed, { onVisit: (_v, id) => memory.push(id) });

// 2. Through HTTP.
const clock = new ManualClock();
const service = await startService(clock, { TRUST_PROXY: '127.0.0.1/32,::1' });
const { base, live } = service;

const http: string[] = [];
const visits: SimVisit[] = [...worldOf(world, n, seed).visits()];
const started = performance.now();
for (const v of visits) {
  clock.set(v.t);
  const send = () =>
    fetch(`${base}/v1/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': live, 'x-forwarded-for': v.ip },
      body: JSON.stringify(identifyBody(v.values, { timestamp: v.t, ...(v.linkedId ? { linkedId: v.linkedId } : {}) })),
    });
  let res = await send();
  // A busy machine can make the database look unreachable for a moment: 503 before any work, retried as the typed client does.
  for (let retry = 0; res.status === 503 && retry < 10; retry++) {
    await new Promise((r) => setTimeout(r, 2_000));
    res = await send();
  }
  if (!res.ok) throw new Error(`identify: ${res.status} ${await res.text()}`);
  http.push(((await res.json()) as { visitorId: string }).visitorId);
}
const seconds = (performance.now() - started) / 1000;

// 3. Agreement: the same partition of visits into visitors (names differ).
const toHttp = new Map<string, string>();
const toMem = new Map<string, string>();
let agree = 0;
let firstDisagreement = -1;
memory.forEach((m, i) => {
  const h = http[i]!;
  const ok = (toHttp.get(m) ?? h) === h && (toMem.get(h) ?? m) === m;
  if (ok) agree++;
  else if (firstDisagreement < 0) firstDisagreement = i;
  if (!toHttp.has(m)) toHttp.set(m, h);
  if (!toMem.has(h)) toMem.set(h, m);
});

// Recall and false merges of the HTTP run, by the benchmark's definitions.
const owner = new Map<string, number>();
const first: string[] = [];
let revisits = 0;
let recalled = 0;
let merged = 0;
visits.forEach((v, i) => {
  const id = http[i]!;
  if (!owner.has(id)) owner.set(id, v.dev);
  if (v.i === 0) first[v.dev] = id;
  else {
    revisits++;
    if (id === first[v.dev]) recalled++;
  }
  if (owner.get(id) !== v.dev) merged++;
});
if (firstDisagreement >= 0) {
  const v = visits[firstDisagreement]!;
  const m = memory[firstDisagreement]!;
  const h = http[firstDisagreement]!;
  console.log(
    `first difference: device ${v.dev} visit ${v.i} (${v.drift.join('+') || 'no drift'}) from ${v.ip}: in memory ${m} (≙ ${toHttp.get(m)}), over HTTP ${h} (≙ ${toMem.get(h)})`,
  );
}
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
console.log(`world ${world.name}, ${n} devices, seed ${seed}: ${visits.length} visits replayed over HTTP in ${seconds.toFixed(0)} s (${service.source})`);
console.log(
  `agreement with the in-memory index: ${agree}/${visits.length} visits${firstDisagreement >= 0 ? ` (first difference at visit ${firstDisagreement})` : ''}`,
);
console.log(`in memory: recall ${pct(memResult.overall.recall!)}, false merges ${pct(memResult.overall.falseMergeRate!)}`);
console.log(`over HTTP: recall ${pct(recalled / revisits)}, false merges ${pct(merged / visits.length)}`);

await service.close();
process.exit(agree === visits.length ? 0 : 1);
