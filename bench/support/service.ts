// A real server on a real database for the benchmarks (the FerretDB launcher,
// or MONGODB_URI), with one signed-up account, a key of each type and a
// first-party proxy secret.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const dbName = `bench_${Date.now()}`;
  const store = await Store.open({
    uri: db.uri,
    dbName,
    onCommand: (c) => commands.set(`${c.name} ${c.collection}`, (commands.get(`${c.name} ${c.collection}`) ?? 0) + 1),
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
