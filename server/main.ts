// `npm start`: config → database → store → HTTP server, and a graceful stop
// on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the
// database, stop the launcher we started). With WORKERS > 1 this process is
// the primary of a cluster (cluster.ts) and each worker runs the rest.
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { stop as stopEsbuild } from 'esbuild';
import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startDatabaseOrExit } from './database.js';
import { loadEdge } from './edge/analyze.js';
import { channelOf, remoteIpData } from './edge/ipDataRemote.js';
import { DB_SOURCE_ENV, runPrimary, workerSlot } from './cluster.js';
import { agentScript } from './http/agentScript.js';
import { preparePageAssets } from './pages/assets.js';
import { createApp } from './http/app.js';
import { createServer } from './http/server.js';
import { answerPrimary } from './metrics/cluster.js';
import { databaseFigures } from './metrics/database.js';
import { Metrics } from './metrics/registry.js';
import { metricsUrl, serveMetrics } from './metrics/server.js';
import { defaultSweeps, startSweeps, startupMaintenance } from './maintenance.js';
import type { Services } from './services.js';
import { Store } from './store/index.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** JSON lines for machines; readable, coloured lines when a person watches the terminal (LOG_FORMAT). */
function createLogger(config: Config): Logger {
  const pretty = config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
  if (!pretty) return pino({ level: config.logLevel });
  const stream = pinoPretty({ colorize: process.stdout.isTTY === true, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
  return pino({ level: config.logLevel }, stream);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`deviceid: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config);
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, logger);
  const slot = workerSlot();

  const db = await startDatabaseOrExit(config, logger);
  const metrics = config.metrics ? new Metrics() : undefined;

  let store: Store;
  try {
    store = await Store.open({
      uri: db.uri,
      dbName: config.mongodbDb,
      operationTimeoutMs: config.dbTimeoutMs,
      cacheTtlMs: config.cacheTtlMs,
      now: () => systemClock.now(),
      ...(metrics && { onCommandDone: metrics.command }),
    });
  } catch (err) {
    process.stderr.write(`deviceid: cannot connect to the database from ${db.source}: ${(err as Error).message}\n`);
    await db.stop();
    process.exit(1);
  }
  // In a cluster the primary did it before forking the workers.
  if (!cluster.isWorker) {
    try {
      await startupMaintenance(store, logger);
    } catch (err) {
      process.stderr.write(`deviceid: start-up maintenance failed (the next start resumes it): ${(err as Error).message}\n`);
      await store.close();
      await db.stop();
      process.exit(1);
    }
  }

  // Loaded before listening so broken data fails start-up, not the first request.
  // With EDGE_DATA=shared a worker asks the primary, which loaded it before forking.
  const fromPrimary = cluster.isWorker && config.edgeData === 'shared';
  const ipData = fromPrimary
    ? remoteIpData(channelOf(process), { onDisconnect: () => logger.warn('the cluster primary went away; IP lookups answer 503') })
    : undefined;
  if (fromPrimary) logger.info('IP geolocation and ASN lookups go to the cluster primary');
  const [edge] = await Promise.all([loadEdge(config, logger, ipData), agentScript(), preparePageAssets()]);
  // Every script is built and kept: esbuild's service process (about 25 MB) has nothing left to do.
  await stopEsbuild();
  const launcher = db.status ? { status: () => db.status!() } : undefined;
  const app = createApp({ config, store, clock: systemClock, logger, edge, launcher, ...(metrics && { metrics }) });
  const server = createServer(config, app);
  server.listen(config.port);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  }).catch(async (err: Error) => {
    process.stderr.write(`deviceid: cannot listen on port ${config.port}: ${err.message}\n`);
    await store.close();
    await db.stop();
    process.exit(1);
  });
  const port = (server.address() as AddressInfo).port;
  const url = config.port === 0 ? `${config.tls ? 'https' : 'http'}://localhost:${port}` : config.baseUrl;
  // Background work: webhook deliveries in every worker (claimed per delivery);
  // one process runs the sweeps, which are idempotent (a replaced worker 0
  // resumes them), and resumes the deletion jobs a restart interrupted.
  const services = app.locals.services as Services;
  services.webhooks.start();
  let stopSweeps = () => {};
  if (slot === 0) {
    const resumeDeletions = () => services.deletions.resume();
    void resumeDeletions().catch((err: unknown) => logger.warn({ err }, 'resuming deletions failed'));
    stopSweeps = startSweeps(
      { ...defaultSweeps(store, config.retentionDays, config.auditRetentionDays), deletions: resumeDeletions, webhooks: (now) => services.webhooks.sweep(now) },
      systemClock,
      logger,
    );
  }

  // Metrics: served here, or in a cluster by the primary, which asks this worker for its own.
  let metricsServer: { close(): void } | null = null;
  if (metrics) {
    metrics.watch({ ...(launcher && { launcher: launcher.status }), ...(slot === 0 && { queues: databaseFigures(store, systemClock) }) });
    if (cluster.isWorker) answerPrimary(metrics);
    else {
      metricsServer = await serveMetrics(
        config.metrics!,
        () => metrics.scrape(),
        (err) => logger.error({ err }, 'metrics scrape failed'),
      ).catch(async (err: Error) => {
        process.stderr.write(`deviceid: cannot serve metrics on ${config.metrics!.host}:${config.metrics!.port}: ${err.message}\n`);
        await store.close();
        await db.stop();
        process.exit(1);
      });
    }
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    force.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Idle keep-alive sockets would otherwise hold close() open.
      server.closeIdleConnections();
    });
    metricsServer?.close();
    stopSweeps();
    services.webhooks.stop();
    edge.close();
    await app.drain().catch((err: unknown) => logger.error({ err }, 'usage could not be written before exit'));
    await store.close();
    await db.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // Last: whoever reads the banner may stop the process at once, and gets a clean shutdown.
  if (slot === 0) {
    // The banner is logged whatever LOG_LEVEL says (except silent): it is how one learns the URL.
    const banner = config.logLevel === 'silent' ? logger : logger.child({}, { level: 'info' });
    const database = process.env[DB_SOURCE_ENV] ?? db.source;
    banner.info(
      {
        url,
        database,
        workers: config.workers,
        heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
        home: `${url}/`,
        docs: `${url}/docs`,
        openapi: `${url}/openapi.json`,
        health: `${url}/healthz`,
        ...(config.metrics && { metrics: metricsUrl(config.metrics) }),
      },
      `deviceid listening on ${url} (database: ${database}${cluster.isWorker ? `, ${config.workers} workers` : ''}); open ${url}/ to start`,
    );
  }
}

main().catch((err) => {
  process.stderr.write(`deviceid: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
