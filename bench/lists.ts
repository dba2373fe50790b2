// Project lists (server/decisions/): an ip list of 100,000 entries (single
// IPv4 and IPv6 addresses, IPv4 and IPv6 CIDR ranges of mixed lengths,
// nested, some expired), then
//  1. µs per has() over 1,000,000 lookups of random addresses, half inside
//     some range, in CPU time (median of rounds), and the heap the index
//     holds;
//  2. the time to build the index (its first lookup after the load);
//  3. the same list stored through ListsRepo in a fresh database and loaded
//     by a fresh cache (ProjectLists), as the first identify of a process
//     after a start does. On FerretDB unless MONGODB_URI is set.
//
//   node --expose-gc --import tsx bench/lists.ts [--entries 100000] [--lookups 1000000] [--rounds 5] [--no-db]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ManualClock } from '../server/clock.js';
import { startDevdb } from '../server/database.js';
import { ProjectLists } from '../server/decisions/listCache.js';
import { ListIndex } from '../server/decisions/listIndex.js';
import { normalizeListValue } from '../server/decisions/listValues.js';
import { ulid } from '../server/ids.js';
import { Store } from '../server/store/index.js';
import { entryId, type ListEntryDoc } from '../server/store/lists.js';

const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    lookups: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
    'no-db': { type: 'boolean', default: false },
  },
});
const ENTRIES = Number(args.entries);
const LOOKUPS = Number(args.lookups);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const MB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
};

let x = 11;
const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
const v4 = () => {
  const k = next();
  return `${k >>> 24}.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`;
};
const hex = () => (next() & 0xffff).toString(16);
const v6 = () => `2${(next() & 0xfff).toString(16).padStart(3, '0')}:${hex()}:${hex()}:${hex()}:${hex()}::${hex()}`;
const NOW = Date.UTC(2026, 0, 15);

/** 40 % single IPv4, 20 % single IPv6, 25 % IPv4 ranges (/16–/30), 15 % IPv6 ranges (/32–/64); one in ten expired. */
function entries(n: number): { value: string; expiresAt: number | null }[] {
  const out = new Map<string, number | null>();
  while (out.size < n) {
    const r = next() % 100;
    const raw = r < 40 ? v4() : r < 60 ? v6() : r < 85 ? `${v4()}/${16 + (next() % 15)}` : `${v6()}/${32 + (next() % 33)}`;
    const norm = normalizeListValue('ip', raw);
    if (!('value' in norm)) throw new Error(norm.error);
    out.set(norm.value, next() % 10 === 0 ? NOW - 1 : next() % 2 ? null : NOW + 86_400_000);
  }
  return [...out].map(([value, expiresAt]) => ({ value, expiresAt }));
}

const list = entries(ENTRIES);
const probes: string[] = [];
for (let i = 0; i < 100_000; i++) probes.push(i % 4 === 0 ? v6() : v4());
// Half the probes inside some entry: an address of the range.
for (let i = 0; i < probes.length; i += 2) {
  const e = list[next() % list.length]!.value;
  probes[i] = e.includes('/') ? e.slice(0, e.indexOf('/')).replace(/0$/, '1').replace(/::$/, '::1') : e;
}

const before = heap();
const index = new ListIndex('ip');
index.apply(list);
const applied = heap();
let t = performance.now();
index.has('0.0.0.1', NOW);
const buildMs = performance.now() - t;
const built = heap();
console.log(
  `${ENTRIES} entries: values ${MB(applied - before)}, segments ${MB(built - applied)}, total ${MB(built - before)} ` +
    `(${((built - before) / ENTRIES) | 0} B an entry); segments built in ${buildMs.toFixed(0)} ms`,
);

const runs: number[] = [];
let hits = 0;
for (let r = 0; r < Number(args.rounds); r++) {
  hits = 0;
  const c = process.cpuUsage();
  for (let i = 0; i < LOOKUPS; i++) if (index.has(probes[i % probes.length]!, NOW)) hits++;
  const used = process.cpuUsage(c);
  runs.push((used.user + used.system) / LOOKUPS);
}
runs.sort((a, b) => a - b);
console.log(
  `has(): ${runs[runs.length >> 1]!.toFixed(3)} µs (median of ${runs.length} rounds of ${LOOKUPS}; best ${runs[0]!.toFixed(3)}), ${hits} hits a round`,
);

// Slowest lookups: each timed alone (timer resolution included).
const single: number[] = [];
for (let i = 0; i < 200_000; i++) {
  const p = probes[i % probes.length]!;
  t = performance.now();
  index.has(p, NOW);
  single.push(performance.now() - t);
}
single.sort((a, b) => a - b);
console.log(
  `has(), timed one by one: p50 ${(single[single.length >> 1]! * 1000).toFixed(2)} µs, p99 ${(single[Math.floor(single.length * 0.99)]! * 1000).toFixed(2)} µs`,
);

if (!args['no-db']) {
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-bench-lists-'));
  const db = process.env.MONGODB_URI ? null : await startDevdb({ dataDir: dir, devdb: { backend: 'sqlite', postgresqlUrl: undefined } });
  const clock = new ManualClock(NOW);
  const store = await Store.open({
    uri: process.env.MONGODB_URI ?? db!.uri,
    dbName: `bench_lists_${Date.now()}`,
    now: () => clock.now(),
    operationTimeoutMs: 120_000,
  });
  try {
    const listId = `lst_${ulid()}`;
    await store.lists.insertBounded(
      {
        _id: listId,
        accountId: 'acc_bench',
        projectId: 'prj_bench',
        name: 'ips',
        kind: 'ip',
        description: '',
        entries: ENTRIES,
        createdAt: new Date(NOW),
        updatedAt: new Date(NOW),
      },
      50,
    );
    t = performance.now();
    const docs: ListEntryDoc[] = list.map((e) => ({
      _id: entryId(listId, e.value),
      listId,
      accountId: 'acc_bench',
      projectId: 'prj_bench',
      value: e.value,
      note: '',
      expiresAt: e.expiresAt,
      addedAt: NOW,
      updatedAt: NOW,
    }));
    await store.lists.put(docs, []);
    console.log(`stored ${ENTRIES} entries in ${(performance.now() - t).toFixed(0)} ms`);
    const cache = new ProjectLists(store, clock);
    const before = heap();
    t = performance.now();
    let lookup = await cache.lookup('prj_bench', 1);
    const loadMs = performance.now() - t;
    t = performance.now();
    lookup.has('ips', '0.0.0.1');
    const buildMs = performance.now() - t;
    console.log(`a fresh cache loaded the list in ${loadMs.toFixed(0)} ms (segments then built in ${buildMs.toFixed(0)} ms); it holds ${MB(heap() - before)}`);
    // Another process changes 1,000 entries: this one reads the change record.
    clock.advance(1_000);
    await store.lists.recordChanges(
      listId,
      clock.now(),
      list.slice(0, 1000).map((e) => ({ value: e.value, expiresAt: null, removed: true })),
    );
    t = performance.now();
    lookup = await cache.lookup('prj_bench', 2);
    const deltaMs = performance.now() - t;
    t = performance.now();
    lookup.has('ips', '0.0.0.1');
    console.log(`after a change of 1,000 entries: read in ${deltaMs.toFixed(0)} ms, segments rebuilt in ${(performance.now() - t).toFixed(0)} ms`);
  } finally {
    await store.dropDatabase();
    await store.close();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
