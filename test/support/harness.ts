// A real app on a real database for one test file: its own database name,
// an injected clock, captured logs.
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { inject } from 'vitest';
import { ManualClock } from '../../server/clock.js';
import { loadConfig, type Config } from '../../server/config.js';
import type { BotJudge } from '../../server/bots/judge.js';
import { loadEdge } from '../../server/edge/analyze.js';
import { createApp } from '../../server/http/app.js';
import { databaseFigures } from '../../server/metrics/database.js';
import type { Metrics } from '../../server/metrics/registry.js';
import { ProjectChanges } from '../../server/projects/changes.js';
import { Store, type StoreOptions } from '../../server/store/index.js';

export interface Harness {
  app: ReturnType<typeof createApp>;
  http: () => ReturnType<typeof request>;
  store: Store;
  clock: ManualClock;
  config: Config;
  /** Every log line written so far, as raw JSON text. */
  logs: () => string;
  /**
   * Another process on the same database: its own connection, caches and
   * locks, the same configuration and clock (closed with this harness).
   */
  otherProcess: (onCommand?: StoreOptions['onCommand']) => Promise<{ app: ReturnType<typeof createApp>; http: () => ReturnType<typeof request>; store: Store }>;
  close: () => Promise<void>;
}

export function testDbName(file: string): string {
  const stem = basename(file)
    .replace(/\.test\.ts$/, '')
    .replace(/[^A-Za-z0-9]/g, '_')
    .slice(0, 30);
  return `t_${stem}_${randomBytes(4).toString('hex')}`;
}

/**
 * LISTS_DIR defaults to an empty directory: no lists unless a test provides
 * fixtures. Sign-up is open and not limited per address, nor in the password
 * checks waiting at once, so that tests can create many accounts from
 * 127.0.0.1, also concurrently (the first is the instance's administrator);
 * test/server/accounts/signup.test.ts covers the modes and limits.
 */
export const TEST_ENV = {
  DATA_DIR: '.data/test',
  LISTS_DIR: '.data/test/no-lists',
  SERVER_SECRET: 'test-secret-'.padEnd(40, 'x'),
  LOG_LEVEL: 'info',
  SIGNUP: 'open',
  SIGNUPS_PER_IP_PER_HOUR: '100000',
  PASSWORD_CHECK_QUEUE: '10000',
  // A loaded test machine is no stuck worker: the tests of the time limit set their own.
  PASSWORD_CHECK_TIMEOUT_MS: '30000',
};

/** What a test puts in place of the process's own: a bot judge that reads a local key directory. */
export interface HarnessOptions {
  bots?: (clock: ManualClock) => BotJudge;
  /** Prometheus metrics, wired as main.ts wires them (database commands, the database's figures). */
  metrics?: Metrics;
}

export async function createHarness(
  file: string,
  env: Record<string, string> = {},
  onCommand?: StoreOptions['onCommand'],
  opts: HarnessOptions = {},
): Promise<Harness> {
  const config = loadConfig({ ...TEST_ENV, ...env });
  const clock = new ManualClock();
  const dbName = testDbName(file);
  const open = (commands?: StoreOptions['onCommand']) =>
    Store.open({
      uri: inject('mongoUri'),
      dbName,
      operationTimeoutMs: config.dbTimeoutMs,
      cacheTtlMs: config.cacheTtlMs,
      now: () => clock.now(),
      onCommand: commands,
      ...(opts.metrics && { onCommandDone: opts.metrics.command }),
    });
  const store = await open(onCommand);
  const others: Store[] = [];
  let logText = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logText += chunk.toString();
      cb();
    },
  });
  const logger = pino({ level: config.logLevel }, sink);
  const edge = await loadEdge(config, logger);
  const bots = opts.bots?.(clock);
  // The processes of one instance: a change made in one reaches the others' caches before it is answered, as the cluster's relay does.
  const changes = new ProjectChanges(null);
  const metrics = opts.metrics;
  metrics?.watch({ queues: databaseFigures(store, clock) });
  const app = createApp({ config, store, clock, logger, edge, changes, ...(bots && { bots }), ...(metrics && { metrics }) });
  return {
    app,
    http: () => request(app),
    store,
    clock,
    config,
    logs: () => logText,
    otherProcess: async (commands) => {
      const other = await open(commands);
      others.push(other);
      const otherApp = createApp({ config, store: other, clock, logger, edge, changes, ...(bots && { bots }) });
      return { app: otherApp, http: () => request(otherApp), store: other };
    },
    close: async () => {
      for (const other of others) await other.close();
      edge.close();
      await store.dropDatabase();
      await store.close();
    },
  };
}
