// Database outages under load, on a real FerretDB launcher supervised by the
// server and real HTTP: the launcher is killed (SIGKILL) or frozen (SIGSTOP)
// while identify runs. Requests then fail fast with 503 and Retry-After
// (never 500, never held for the outage), the supervisor restarts a killed
// launcher, the server recovers without a restart of its own, and every event
// answered 200 is still there.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../server/clock.js';
import { loadConfig } from '../../../server/config.js';
import { DEVDB_BIN, startDevdb, type Database, type SupervisorLog } from '../../../server/database.js';
import { loadEdge } from '../../../server/edge/analyze.js';
import { createApp } from '../../../server/http/app.js';
import { Store } from '../../../server/store/index.js';
import { TEST_ENV } from '../../support/harness.js';
import { listenApp } from '../../support/httpServer.js';
import { seedKey } from '../../support/keys.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

interface Outcome {
  status: number;
  ms: number;
  at: number;
  requestId?: string;
  retryAfter: string | null;
}

/** Time limit of one database round trip in these tests (DB_TIMEOUT_MS). */
const OP_TIMEOUT_MS = 1_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function serve() {
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-outage-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const supervisorLines: string[] = [];
  const log: SupervisorLog = {
    error: (_f, msg) => supervisorLines.push(msg),
    info: (_f, msg) => supervisorLines.push(msg),
  };
  const db: Database = await startDevdb({ dataDir: dir, devdb: { backend: 'sqlite', postgresqlUrl: undefined } }, log);
  cleanups.push(() => db.stop());
  const config = loadConfig({ ...TEST_ENV, DATA_DIR: dir, PLANS: '{"free":{"rps":100000}}', DB_TIMEOUT_MS: String(OP_TIMEOUT_MS) });
  const store = await Store.open({ uri: db.uri, dbName: 'outage', operationTimeoutMs: config.dbTimeoutMs });
  cleanups.push(() => store.close());
  const logger = pino({ level: 'silent' });
  const edge = await loadEdge(config, logger);
  cleanups.push(async () => edge.close());
  const app = createApp({ config, store, clock: new ManualClock(), logger, edge, launcher: db as Required<Database> });
  const server = await listenApp(app);
  cleanups.push(() => server.close());
  const live = await seedKey(store, 'live');
  const secret = await seedKey(store, 'secret');
  return { db, url: server.url, live, secret, supervisorLines };
}

/**
 * Sends identify calls from `workers` loops until `done()` says stop; each
 * call a new device, so the calls do not queue behind one visitor. The loops
 * run in this process, next to the server.
 */
async function load(url: string, key: string, workers: number, done: (outcomes: Outcome[]) => boolean): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let seed = 1_000;
  const deadline = Date.now() + 60_000;
  const worker = async () => {
    while (!done(outcomes) && Date.now() < deadline) {
      const started = Date.now();
      const res = await fetch(`${url}/v1/identify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify(identifyBody(deviceValues(seed++))),
      });
      const body = (await res.json()) as { requestId?: string };
      outcomes.push({ status: res.status, ms: Date.now() - started, at: started, requestId: body.requestId, retryAfter: res.headers.get('retry-after') });
      // A client backs off after a 503 (Retry-After asks for seconds; a short pause keeps samples coming).
      if (res.status === 503) await new Promise((r) => setTimeout(r, 50));
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return outcomes;
}

async function expectEventsKept(url: string, secret: string, outcomes: Outcome[]): Promise<void> {
  const accepted = outcomes.filter((o) => o.status === 200);
  const found = await Promise.all(
    accepted.map(async (o) => (await fetch(`${url}/v1/events/${o.requestId}`, { headers: { authorization: `Bearer ${secret}` } })).status),
  );
  expect(found.filter((s) => s !== 200)).toEqual([]);
}

const readyz = async (url: string) => (await fetch(`${url}/readyz`)).json() as Promise<Record<string, unknown>>;

describe.skipIf(!existsSync(DEVDB_BIN) || !!process.env.MONGODB_URI)('database outages', () => {
  it('launcher killed under load: 503 with Retry-After within 1 s, restarted, served again without a server restart, no event lost', async () => {
    const { db, url, live, secret, supervisorLines } = await serve();
    const firstPid = db.pid!;
    let killedAt = 0;
    const outcomes = await load(url, live, 4, (seen) => {
      const ok = seen.filter((o) => o.status === 200).length;
      if (!killedAt && ok >= 30) {
        killedAt = Date.now();
        process.kill(firstPid, 'SIGKILL');
      }
      // Stop once 20 more calls succeeded after the outage.
      return killedAt > 0 && seen.filter((o) => o.status === 200 && o.at > killedAt).length >= 20 && seen.some((o) => o.status === 503);
    });

    const failed = outcomes.filter((o) => o.status !== 200);
    const unavailable = failed.filter((o) => o.status === 503);
    expect(failed.filter((o) => o.status !== 503)).toEqual([]);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable.every((o) => o.retryAfter !== null && Number(o.retryAfter) >= 1)).toBe(true);
    expect(Math.max(...unavailable.map((o) => o.ms))).toBeLessThan(1_000);
    expect(outcomes.filter((o) => o.status === 200 && o.at > killedAt).length).toBeGreaterThanOrEqual(20);

    expect(db.pid).not.toBe(firstPid);
    expect(supervisorLines).toEqual(['database launcher exited; restarting', 'database launcher restarted']);
    expect(await readyz(url)).toEqual({
      status: 'ready',
      database: { reachable: true, launcher: { state: 'running', restarts: 1, lastExit: { at: expect.any(String), code: null, signal: 'SIGKILL' } } },
    });
    await expectEventsKept(url, secret, outcomes);
    const figures = {
      calls: outcomes.length,
      accepted: outcomes.filter((o) => o.status === 200).length,
      unavailable: unavailable.length,
      slowest503Ms: Math.max(...unavailable.map((o) => o.ms)),
      firstSuccessAfterKillMs: Math.min(...outcomes.filter((o) => o.status === 200 && o.at > killedAt).map((o) => o.at)) - killedAt,
    };
    console.log(`database kill: ${JSON.stringify(figures)}`);
  }, 90_000);

  it('launcher frozen under load: requests fail within the operation time limit (never held), 503s at once once known, back when it resumes', async () => {
    const { db, url, live, secret } = await serve();
    let frozenAt = 0;
    let resumedAt = 0;
    const outcomes = await load(url, live, 4, (seen) => {
      const ok = seen.filter((o) => o.status === 200).length;
      if (!frozenAt && ok >= 20) {
        frozenAt = Date.now();
        process.kill(db.pid!, 'SIGSTOP');
        setTimeout(() => {
          resumedAt = Date.now();
          process.kill(db.pid!, 'SIGCONT');
        }, 4 * OP_TIMEOUT_MS).unref();
      }
      return resumedAt > 0 && seen.filter((o) => o.status === 200 && o.at > resumedAt).length >= 20;
    });
    const failed = outcomes.filter((o) => o.status !== 200);
    expect(failed.filter((o) => o.status !== 503)).toEqual([]);
    expect(failed.length).toBeGreaterThan(0);
    // One request makes a few round trips: it fails after at most a few time limits, not after the freeze.
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(3 * OP_TIMEOUT_MS);
    expect(await readyz(url)).toMatchObject({ status: 'ready', database: { reachable: true, launcher: { restarts: 0 } } });
    await expectEventsKept(url, secret, outcomes);
  }, 90_000);
});
