// A cache's cold load of one ip list of 100,000 entries (single addresses
// and CIDR ranges, v4 and v6, some with an expiry), added through the lists
// service in batches of 10,000, by each way ProjectLists can load it: the
// whole list from listEntries, its history (the change records, while the
// list is young) and its snapshot (after the sweep took one). Each load is a
// fresh cache's first lookup, timed to the loaded index (segments are built
// by the first has(), the same for all three). On FerretDB unless
// MONGODB_URI is set.
//
//   npx tsx bench/list-load.ts [--entries 100000] [--rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AuditLog } from '../server/audit/log.js';
import { ManualClock } from '../server/clock.js';
import { startDevdb } from '../server/database.js';
import { HISTORY_MS, ProjectLists, snapshotSweep } from '../server/decisions/listCache.js';
import { ListsService } from '../server/decisions/listsService.js';
import { Store } from '../server/store/index.js';

const { values: args } = parseArgs({ options: { entries: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } } });
const ENTRIES = Number(args.entries);
const ROUNDS = Number(args.rounds);
const BATCH = 10_000;
const NOW = Date.UTC(2026, 0, 15);

let x = 11;
const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
const v4 = () => `${next() >>> 24}.${next() & 255}.${next() & 255}.${next() & 255}`;
const hex = () => (next() & 0xffff).toString(16);
/** 40 % single IPv4, 20 % single IPv6, 25 % IPv4 ranges, 15 % IPv6 ranges; one in ten expiring in a month. */
function entry() {
  const r = next() % 100;
  const value =
    r < 40 ? v4() : r < 60 ? `2a02:${hex()}:${hex()}::${hex()}` : r < 85 ? `${v4()}/${16 + (next() % 15)}` : `2a02:${hex()}::/${32 + (next() % 17)}`;
  return { value, ...(next() % 10 === 0 && { expiresAt: NOW + 30 * 86_400_000 }) };
}

const dir = mkdtempSync(join(tmpdir(), 'deviceid-bench-list-load-'));
const db = process.env.MONGODB_URI ? null : await startDevdb({ dataDir: dir, devdb: { backend: 'sqlite', postgresqlUrl: undefined } });
const clock = new ManualClock(NOW);
const store = await Store.open({
  uri: process.env.MONGODB_URI ?? db!.uri,
  dbName: `bench_list_load_${Date.now()}`,
  now: () => clock.now(),
  operationTimeoutMs: 120_000,
});
try {
  const accountId = 'acc_bench';
  const projectId = 'prj_bench';
  await store.projects.insert({ _id: projectId, accountId, name: 'bench', allowedDomains: [], createdAt: new Date(NOW) });
  const service = new ListsService(store, clock, new AuditLog(store, clock), { lists: 50, entries: ENTRIES });
  await service.create(accountId, projectId, { name: 'ips', kind: 'ip', description: '' });
  let t = performance.now();
  let held = 0;
  while (held < ENTRIES) {
    clock.advance(1000);
    held = (await service.changeEntries(accountId, projectId, 'ips', { add: Array.from({ length: Math.min(BATCH, ENTRIES - held) }, entry) })).entries;
  }
  console.log(`added ${held} entries in batches of ${BATCH} in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const probes = Array.from({ length: 10_000 }, () => (next() % 4 ? v4() : `2a02:${hex()}:${hex()}::1`));
  let expected: boolean[] | null = null;
  /** Fresh caches' first lookups: ms each, and that every way finds the same. */
  async function load(how: string): Promise<void> {
    const ms: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const cache = new ProjectLists(store, clock);
      t = performance.now();
      const lookup = await cache.lookup(projectId, 1);
      ms.push(performance.now() - t);
      const found = probes.map((p) => lookup.has('ips', p));
      expected ??= found;
      if (found.some((f, i) => f !== expected![i])) throw new Error(`${how}: lookups differ from the first load's`);
    }
    ms.sort((a, b) => a - b);
    console.log(`${how.padEnd(10)} ${ms.map((m) => `${m.toFixed(0)} ms`).join(', ')} (${ROUNDS} fresh caches)`);
  }

  clock.advance(60_000);
  await load('history');
  // The list is older than the change records kept: without a snapshot it is read whole.
  clock.set(NOW + HISTORY_MS);
  await load('whole');
  t = performance.now();
  const taken = await snapshotSweep(store)(new Date(clock.now()));
  if (taken !== 1) throw new Error('the sweep took no snapshot');
  console.log(`the sweep took the snapshot in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  clock.advance(60_000);
  await load('snapshot');
} finally {
  await store.dropDatabase();
  await store.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
}
