// `_id` range reads on the dev database launcher (devdb/), the shapes the
// events collection is read with (EventIndexRepo.range and outbox,
// EventsRepo.olderThan), on a collection of --docs documents (large events,
// small search entries) of which --range are in the searched range. Prints the
// median and 90th percentile of each read. The events are inserted oldest
// first, so without pushdown the retention read (no sort) stops scanning early.
// Run, e.g. with a copy of the launcher built before a change of devdb/ and
// the one built after:
//
//   node --import tsx bench/devdb-range.ts [--backend sqlite|postgresql] [--bin .devdb/bin/devdb]
//                                          [--docs 100000] [--range 1000] [--runs 30]
//
// The PostgreSQL backend needs a database (UTF8) at DEVDB_POSTGRESQL_URL
// (default postgres://postgres@127.0.0.1:5432/deviceid_bench); the run uses
// its own FerretDB database there and drops it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { MongoClient, type Document, type Filter, type Sort } from 'mongodb';
import { ulid } from 'ulid';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'sqlite' },
    bin: { type: 'string', default: '.devdb/bin/devdb' },
    docs: { type: 'string', default: '100000' },
    range: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '30' },
  },
});
const total = Number(args.docs);
const inRange = Number(args.range);
const runs = Number(args.runs);

const dir = mkdtempSync(join(tmpdir(), 'deviceid-devdb-range-'));
const backendArgs =
  args.backend === 'postgresql'
    ? ['-backend', 'postgresql', '-postgresql-url', process.env.DEVDB_POSTGRESQL_URL ?? 'postgres://postgres@127.0.0.1:5432/deviceid_bench']
    : ['-backend', 'sqlite', '-sqlite-dir', dir];
const child = spawn(args.bin, [...backendArgs, '-listen', '127.0.0.1:0', '-log-level', 'error', '-watch-stdin'], { stdio: ['pipe', 'pipe', 'inherit'] });
const uri = await new Promise<string>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`launcher exited with ${code}`)));
  createInterface({ input: child.stdout }).once('line', (l) => resolve(l.replace(/^MONGODB_URI=/, '')));
});

const client = await MongoClient.connect(uri);
const db = client.db(`range_${Date.now()}`);
const col = db.collection<{ _id: string } & Document>('events');
const t0 = Date.UTC(2026, 0, 1);

// The collection: events (`req_<ulid>`, about 1.5 kB each), their search
// entries (`acc_<n>|v|<visitor>|<ulid>`) and outbox entries, and the --range
// entries of one visitor that the search reads.
const payload = 'x'.repeat(1_400);
const events = Math.floor((total - inRange) / 2);
const others = total - inRange - events;
const eventIds: string[] = [];
const started = Date.now();
let batch: ({ _id: string } & Document)[] = [];
const flush = async () => {
  if (batch.length) await col.insertMany(batch, { ordered: false });
  batch = [];
};
for (let i = 0; i < events; i++) {
  const id = `req_${ulid(t0 + i * 1_000)}`;
  eventIds.push(id);
  batch.push({ _id: id, accountId: `acc_${i % 20}`, visitorId: `iq_${i % 5_000}`, signalsJson: payload, verdicts: { bot: { result: false } }, suspect: false });
  if (batch.length === 1_000) await flush();
}
for (let i = 0; i < others; i++) {
  const id = i % 10 === 0 ? `~o|req_${ulid(t0 + i * 1_000)}` : `acc_${i % 20}|v|iq_${i % 5_000}|${ulid(t0 + i * 1_000)}`;
  batch.push({ _id: id, r: `req_${ulid(t0 + i * 1_000)}`, f: { b: 'none', n: false, t: false, s: false } });
  if (batch.length === 1_000) await flush();
}
for (let i = 0; i < inRange; i++) {
  batch.push({
    _id: `acc_target|v|iq_target|${ulid(t0 + i * 60_000)}`,
    r: `req_${ulid(t0 + i * 60_000)}`,
    f: { b: 'none', n: false, t: false, s: i % 2 === 0 },
  });
  if (batch.length === 1_000) await flush();
}
await flush();
console.log(`${args.backend}: ${await col.countDocuments({})} documents inserted in ${((Date.now() - started) / 1000).toFixed(0)} s (${args.bin})`);

const reads: [string, Filter<{ _id: string }>, Sort | undefined, number][] = [
  ['search: range, sort desc, limit 100', { _id: { $gt: 'acc_target|v|iq_target|', $lt: 'acc_target|v|iq_target|~' } }, { _id: -1 }, 100],
  ['search: range, sort asc, limit 100', { _id: { $gt: 'acc_target|v|iq_target|', $lt: 'acc_target|v|iq_target|~' } }, { _id: 1 }, 100],
  ['retention: $gte/$lt 1,000 events, limit 500', { _id: { $gte: 'req_', $lt: eventIds[1_000]! } }, undefined, 500],
  ['outbox: range, sort asc, limit 100', { _id: { $gt: '~o|', $lt: '~o|req_~' } }, { _id: 1 }, 100],
  ['range and another key, sort desc, limit 100', { _id: { $gt: 'acc_target|v|iq_target|', $lt: 'acc_target|v|iq_target|~' }, 'f.s': true }, { _id: -1 }, 100],
];

// SQLite: the launcher indexes a new collection in the background; wait for
// it (up to 2 s: a launcher without the range index never shows it).
for (let t = 0; t < 20; t++) {
  const e = await col.find(reads[0]![1]).explain('queryPlanner');
  if (/USING INDEX .*_id_text|Index Scan/.test(JSON.stringify(e.queryPlanner))) break;
  await new Promise((r) => setTimeout(r, 100));
}

for (const [name, filter, sort, limit] of reads) {
  const times: number[] = [];
  let n = 0;
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    let cursor = col.find(filter).limit(limit);
    if (sort) cursor = cursor.sort(sort);
    n = (await cursor.toArray()).length;
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  const e = await col.find(filter, { sort, limit }).explain('queryPlanner');
  const pushed = ['filterPushdown', 'sortPushdown', 'limitPushdown'].filter((k) => e[k]).join('+') || 'none';
  console.log(
    `  ${name}: ${n} docs, median ${times[Math.floor(runs / 2)]!.toFixed(1)} ms, p90 ${times[Math.floor(runs * 0.9)]!.toFixed(1)} ms (pushdown: ${pushed})`,
  );
}

await db.dropDatabase();
await client.close();
child.stdin.end();
await new Promise((r) => child.once('exit', r));
rmSync(dir, { recursive: true, force: true });
