// WORKERS=N: one primary process starts the database (the supervised dev
// launcher, or nothing with MONGODB_URI), runs the start-up maintenance
// (before any worker serves) and forks N workers that share the port
// (node:cluster). Workers reach the database through MONGODB_URI; the
// first slot runs the periodic sweeps and prints the banner. A worker that
// dies is replaced; SIGTERM/SIGINT stop the workers gracefully (each writes
// its usage and gives back unused quota), then the database.
// With EDGE_DATA=shared (the default) the primary also holds the one copy of
// the IP geolocation and ASN data and answers the workers' lookups over the
// cluster's IPC channel (edge/ipDataRemote.ts); EDGE_DATA=per-worker leaves
// each worker its own copy.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { startDatabaseOrExit } from './database.js';
import { heapFlags } from './heap.js';
import { localIpData, type IpData } from './edge/ipData.js';
import { channelOf, serveIpData } from './edge/ipDataRemote.js';
import { startupMaintenance } from './maintenance.js';
import { gatherWorkers } from './metrics/cluster.js';
import { Metrics } from './metrics/registry.js';
import { metricsUrl, serveMetrics } from './metrics/server.js';
import { relayProjectChanges } from './projects/changes.js';
import { Store } from './store/index.js';

/** Environment a worker gets from the primary. */
export const WORKER_SLOT_ENV = 'DEVICEID_WORKER_SLOT';
export const DB_SOURCE_ENV = 'DEVICEID_DB_SOURCE';

const STOP_GRACE_MS = 15_000;
const REFORK_DELAY_MS = 1_000;

/** This process's slot among the workers (0 when not clustered). */
export function workerSlot(): number {
  return cluster.isWorker ? Number(process.env[WORKER_SLOT_ENV] ?? 0) : 0;
}

export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  // Read beside the database's start; awaited before forking, so broken data fails start-up.
  const loading = config.edgeData === 'shared' ? localIpData(logger) : undefined;
  loading?.catch(() => {});
  const db = await startDatabaseOrExit(config, logger);
  try {
    const store = await Store.open({ uri: db.uri, dbName: config.mongodbDb, operationTimeoutMs: config.dbTimeoutMs, cacheTtlMs: 0 });
    try {
      await startupMaintenance(store, logger);
    } finally {
      await store.close();
    }
  } catch (err) {
    process.stderr.write(`deviceid: start-up maintenance failed (the next start resumes it): ${(err as Error).message}\n`);
    await db.stop();
    process.exit(1);
  }
  let ipData: IpData | undefined;
  try {
    ipData = await loading;
  } catch (err) {
    process.stderr.write(`deviceid: cannot load the IP geolocation and ASN data: ${(err as Error).message}\n`);
    await db.stop();
    process.exit(1);
  }
  const env = { MONGODB_URI: db.uri, [DB_SOURCE_ENV]: db.source };
  const workers = new Map<number, Worker>();
  let stopping = false;
  const relay = relayProjectChanges(() => workers.values());

  const fork = (slot: number) => {
    const w = cluster.fork({ ...env, [WORKER_SLOT_ENV]: String(slot) });
    workers.set(slot, w);
    if (ipData) serveIpData(channelOf(w.process), ipData);
    relay(w);
    w.on('exit', (code, signal) => {
      workers.delete(slot);
      if (stopping) return;
      logger.error({ slot, code, signal }, 'worker exited; starting another');
      setTimeout(() => !stopping && fork(slot), REFORK_DELAY_MS).unref();
    });
  };
  // Each worker keeps its own visitor cache: its heap is capped for it (server/heap.ts).
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...heapFlags(config.visitorCacheSize)] });
  for (let slot = 0; slot < config.workers; slot++) fork(slot);
  logger.info({ workers: config.workers, database: db.source, edgeData: config.edgeData }, 'primary started');

  // One scrape of the primary gives the instance: its own figures (the launcher's, its process) and every worker's.
  let metricsServer: { close(): void; port: number } | null = null;
  if (config.metrics) {
    const metrics = new Metrics();
    if (db.status) metrics.watch({ launcher: () => db.status!() });
    try {
      metricsServer = await serveMetrics(
        config.metrics,
        gatherWorkers(metrics, () => workers.values()),
        (err) => logger.error({ err }, 'metrics scrape failed'),
      );
      logger.info({ metrics: metricsUrl({ ...config.metrics, port: metricsServer.port }) }, 'metrics served');
    } catch (err) {
      process.stderr.write(`deviceid: cannot serve metrics on ${config.metrics.host}:${config.metrics.port}: ${(err as Error).message}\n`);
      stopping = true;
      for (const w of workers.values()) w.process.kill('SIGTERM');
      await db.stop();
      process.exit(1);
    }
  }

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping workers');
    metricsServer?.close();
    const exits = [...workers.values()].map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    for (const w of workers.values()) w.process.kill(signal);
    const force = setTimeout(() => workers.forEach((w) => w.process.kill('SIGKILL')), STOP_GRACE_MS);
    await Promise.all(exits);
    clearTimeout(force);
    await db.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
