// A real server on a real database for the benchmarks (the FerretDB launcher,
// or MONGODB_URI), with one signed-up account, a key of each type and a
// first-party proxy secret.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BSON } from 'mongodb';
import { pino } from 'pino';
import type { Clock } from '../../server/clock.js';
import { loadConfig } from '../../server/config.js';
import { startDatabase } from '../../server/database.js';
import { loadEdge } from '../../server/edge/analyze.js';
import { createApp } from '../../server/http/app.js';
import type { Metrics } from '../../server/metrics/registry.js';
import { Store } from '../../server/store/index.js';

export interface BenchService {
  base: string;
  live: string;
  secret: string;
  /** The project's first-party proxy secret. */
  proxySecret: string;
  source: string;
  /** The server's store (for baselines and seeding on the same database). */
  store: Store;
  /** Commands the server sent to the database since the last call, by command and collection. */
  commands(): Map<string, number>;
  /**
   * While on, also what the commands write, by command and collection: the
   * documents inserted, updated or deleted and the BSON bytes sent (costs the
   * server's process some CPU: for an accounting pass, not a timed one).
   */
  accounting(on: boolean): Map<string, { documents: number; bytes: number }>;
  /** CPU seconds used so far by the database: the launcher, and PostgreSQL's processes on its backend. */
  databaseCpu(): number;
  /** On the PostgreSQL backend, its database's counters so far (pg_stat_database): transactions and rows; null on others. */
  postgresCounters(): Record<'transactions' | 'returned' | 'fetched' | 'inserted' | 'updated' | 'deleted', number> | null;
  /** Another server on the same database (its own connection and caches), with or without metrics; closed with this one. */
  another(metrics?: Metrics): Promise<string>;
  close(): Promise<void>;
}

/** `metrics`: the server records Prometheus metrics as with METRICS_PORT (wired as main.ts wires them). */
export async function startService(clock: Clock, env: Record<string, string> = {}, metrics?: Metrics): Promise<BenchService> {
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-bench-'));
  const config = loadConfig({
    DATA_DIR: dir,
    LISTS_DIR: join(dir, 'no-lists'),
    PLANS: '{"free":{"rps":1000000,"monthly":100000000}}',
    LOG_LEVEL: 'silent',
    ...env,
    ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}),
  });
  const db = await startDatabase(config);
  const commands = new Map<string, number>();
  let accounting = false;
  const written = new Map<string, { documents: number; bytes: number }>();
  const dbName = `bench_${Date.now()}`;
  const store = await Store.open({
    uri: db.uri,
    dbName,
    onCommand: (c) => {
      const key = `${c.name} ${c.collection}`;
      commands.set(key, (commands.get(key) ?? 0) + 1);
      if (!accounting) return;
      const w = written.get(key) ?? written.set(key, { documents: 0, bytes: 0 }).get(key)!;
      const docs = c.body.documents ?? c.body.updates ?? c.body.deletes;
      w.documents += Array.isArray(docs) ? docs.length : 0;
      w.bytes += BSON.calculateObjectSize(c.body);
    },
    ...(metrics && { onCommandDone: metrics.command }),
  });
  const logger = pino({ level: 'silent' });
  const edge = await loadEdge(config, logger);
  const servers: { close(): void }[] = [];
  const others: Store[] = [];
  const serve = async (on: Store, m?: Metrics) => {
    const server = createApp({ config, store: on, clock, logger, edge, ...(m && { metrics: m }) }).listen(0);
    servers.push(server);
    await new Promise((r) => server.once('listening', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const base = await serve(store, metrics);

  async function api(path: string, body: object, cookie = ''): Promise<{ json: Record<string, unknown>; cookie: string }> {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: config.baseUrl, cookie },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return { json: (await res.json()) as Record<string, unknown>, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie };
  }
  const signup = await api('/api/auth/signup', { email: 'bench@example.com', password: 'benchmark password, twice over' });
  const projects = (await (await fetch(`${base}/api/projects`, { headers: { cookie: signup.cookie } })).json()) as { projects: { id: string }[] };
  const key = async (type: string) => (await api(`/api/projects/${projects.projects[0]!.id}/keys`, { name: 'bench', type }, signup.cookie)).json.key as string;

  return {
    base,
    live: await key('live'),
    secret: await key('secret'),
    proxySecret: (await api(`/api/projects/${projects.projects[0]!.id}/proxy/secret`, {}, signup.cookie)).json.secret as string,
    source: db.source,
    store,
    commands() {
      const copy = new Map(commands);
      commands.clear();
      return copy;
    },
    accounting(on) {
      accounting = on;
      const copy = new Map(written);
      written.clear();
      return copy;
    },
    databaseCpu() {
      if (db.pid === undefined) return NaN;
      return cpuSeconds(db.pid) + (env.DEVDB_BACKEND === 'postgresql' ? postgresCpu() : 0);
    },
    postgresCounters() {
      const url = env.DEVDB_POSTGRESQL_URL;
      if (env.DEVDB_BACKEND !== 'postgresql' || !url) return null;
      const sql = `select xact_commit + xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted from pg_stat_database where datname = current_database()`;
      // A backend flushes its counters at most once a second, and the rest when idle for 10 s: callers wait 11 s first.
      const out = execFileSync('psql', ['-Atq', '-F', ' ', url, '-c', 'select pg_stat_clear_snapshot()', '-c', sql], { encoding: 'utf8' });
      const [transactions, returned, fetched, inserted, updated, deleted] = out.trim().split('\n').pop()!.split(' ').map(Number);
      return { transactions: transactions!, returned: returned!, fetched: fetched!, inserted: inserted!, updated: updated!, deleted: deleted! };
    },
    async another(m) {
      const other = await Store.open({ uri: db.uri, dbName, ...(m && { onCommandDone: m.command }) });
      others.push(other);
      return serve(other, m);
    },
    async close() {
      for (const s of servers) s.close();
      for (const o of others) await o.close();
      edge.close();
      await store.close();
      await db.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** /proc/<pid>/stat's fields after the command name (the first is the state); null when the process is gone. */
function statOf(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return null;
  }
}

/** A process's user + system CPU seconds (in clock ticks of 1/100 s), with its exited children's when `children`; 0 when it is gone. */
function cpuSeconds(pid: number, children = false): number {
  const f = statOf(pid);
  if (!f) return 0;
  return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) / 100;
}

/**
 * PostgreSQL's CPU seconds: its postmaster (the `postgres` process whose
 * parent is not one), the backends it runs now, and those that exited
 * (its children's counted CPU).
 */
function postgresCpu(): number {
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
      } catch {
        return false;
      }
    });
  const parent = new Map(procs.map((pid) => [pid, Number(statOf(pid)?.[1])]));
  const postmaster = procs.find((pid) => !parent.has(parent.get(pid)!));
  if (postmaster === undefined) return 0;
  return cpuSeconds(postmaster, true) + procs.filter((pid) => parent.get(pid) === postmaster).reduce((t, pid) => t + cpuSeconds(pid), 0);
}
