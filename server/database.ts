// Chooses and starts the database for `npm start` and the tests:
// MONGODB_URI if set; else a `mongod` on PATH; else our FerretDB launcher
// (devdb/, built by `npm run setup`), which is supervised and restarted if it
// dies. A failure names what was tried.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';

import { REPO_ROOT } from './paths.js';

export { REPO_ROOT };
export const DEVDB_BIN = join(REPO_ROOT, '.devdb', 'bin', 'devdb');

export interface Database {
  uri: string;
  /** Where the URI came from, for the start-up banner. */
  source: string;
  /** Process id of a server we started, if any (changes when a supervisor restarts it). */
  readonly pid?: number;
  /** The launcher's state when this process supervises one. */
  status?(): LauncherStatus;
  stop(): Promise<void>;
}

export interface DatabaseOptions {
  mongodbUri: string | undefined;
  dataDir: string;
  devdb: { backend: 'sqlite' | 'postgresql'; postgresqlUrl: string | undefined };
}

export class DatabaseStartError extends Error {}

export async function startDatabase(opts: DatabaseOptions, log?: SupervisorLog): Promise<Database> {
  if (opts.mongodbUri) {
    return { uri: opts.mongodbUri, source: 'MONGODB_URI', stop: async () => {} };
  }
  const tried = ['MONGODB_URI is not set'];
  if (onPath('mongod')) {
    try {
      return await startMongod(opts.dataDir);
    } catch (err) {
      tried.push(`mongod on PATH failed to start: ${(err as Error).message}`);
    }
  } else {
    tried.push('no mongod on PATH');
  }
  if (!existsSync(DEVDB_BIN)) {
    tried.push(`the FerretDB launcher ${DEVDB_BIN} is not built`);
    throw new DatabaseStartError(
      `No database: ${tried.join('; ')}. Fix: set MONGODB_URI=mongodb://..., or run \`npm run setup\` (needs Go) to build the launcher.`,
    );
  }
  try {
    return await startDevdb(opts, log);
  } catch (err) {
    tried.push(`the FerretDB launcher failed: ${(err as Error).message}`);
    throw new DatabaseStartError(`No database: ${tried.join('; ')}. Fix: check DATA_DIR is writable (or DEVDB_POSTGRESQL_URL reachable), or set MONGODB_URI.`);
  }
}

/** startDatabase for `npm start`: a database that cannot start ends the process with one line saying why. */
export async function startDatabaseOrExit(opts: DatabaseOptions, log?: SupervisorLog): Promise<Database> {
  try {
    return await startDatabase(opts, log);
  } catch (err) {
    if (!(err instanceof DatabaseStartError)) throw err;
    process.stderr.write(`deviceid: ${err.message}\n`);
    process.exit(1);
  }
}

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** What /readyz reports about a database launcher this process supervises. */
export interface LauncherStatus {
  state: 'running' | 'restarting' | 'stopped';
  /** Restarts after unexpected exits since start-up. */
  restarts: number;
  lastExit: { at: string; code: number | null; signal: string | null } | null;
}

/** Where the supervisor reports exits and restarts (pino's methods fit). */
export interface SupervisorLog {
  error(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
}

/** Restart delays after unexpected exits: doubling from the first, capped. */
export const RESTART_BACKOFF = { firstMs: 500, maxMs: 30_000, stableMs: 60_000 } as const;

const silentLog: SupervisorLog = { error: () => {}, info: () => {} };

/**
 * Starts the FerretDB launcher, waits for its `MONGODB_URI=` line, and
 * supervises it: an unexpected exit is logged and the launcher restarted on
 * the same address with back-off, so the MongoDB driver reconnects by itself.
 */
export async function startDevdb(opts: Pick<DatabaseOptions, 'dataDir' | 'devdb'>, log: SupervisorLog = silentLog): Promise<Database> {
  const args =
    opts.devdb.backend === 'postgresql'
      ? ['-backend', 'postgresql', '-postgresql-url', opts.devdb.postgresqlUrl ?? '']
      : ['-backend', 'sqlite', '-sqlite-dir', join(opts.dataDir, 'ferretdb')];
  const first = await spawnDevdb([...args, '-listen', '127.0.0.1:0']);
  const address = new URL(first.uri).host;
  const supervisor = new Supervisor(() => spawnDevdb([...args, '-listen', address]), first.child, log);
  const source = opts.devdb.backend === 'postgresql' ? 'FerretDB launcher (PostgreSQL)' : `FerretDB launcher (SQLite in ${join(opts.dataDir, 'ferretdb')})`;
  return {
    uri: `${first.uri}?directConnection=true`,
    source,
    get pid() {
      return supervisor.pid;
    },
    status: () => supervisor.status(),
    stop: () => supervisor.stop(),
  };
}

interface Spawned {
  child: ChildProcess;
  uri: string;
}

/** One launcher process, resolved once it prints the address it listens on. */
function spawnDevdb(args: string[]): Promise<Spawned> {
  // -watch-stdin: the launcher exits by itself if this process dies without stopping it.
  const child = spawn(DEVDB_BIN, [...args, '-watch-stdin'], { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise<Spawned>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('did not report its address within 30 s'));
    }, 30_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^MONGODB_URI=(\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, uri: m[1]! });
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-2000);
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with code ${code}: ${err.trim().split('\n').pop() ?? ''}`));
    });
  });
}

/** Keeps one launcher running: restarts it after unexpected exits, with back-off. */
class Supervisor {
  private state: LauncherStatus['state'] = 'running';
  private restarts = 0;
  private lastExit: LauncherStatus['lastExit'] = null;
  private failures = 0;
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly respawn: () => Promise<Spawned>,
    private child: ChildProcess,
    private readonly log: SupervisorLog,
  ) {
    this.watch(child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  status(): LauncherStatus {
    return { state: this.state, restarts: this.restarts, lastExit: this.lastExit };
  }

  private watch(child: ChildProcess): void {
    child.once('exit', (code, signal) => {
      if (this.stopping || child !== this.child) return;
      this.lastExit = { at: new Date().toISOString(), code, signal };
      // A launcher that ran for a while starts over at the shortest delay.
      if (Date.now() - this.startedAt >= RESTART_BACKOFF.stableMs) this.failures = 0;
      this.log.error({ code, signal, pid: child.pid }, 'database launcher exited; restarting');
      this.schedule();
    });
  }

  private schedule(): void {
    this.state = 'restarting';
    const delay = Math.min(RESTART_BACKOFF.firstMs * 2 ** this.failures, RESTART_BACKOFF.maxMs);
    this.failures++;
    this.timer = setTimeout(() => void this.restart(), delay);
    this.timer.unref();
  }

  private async restart(): Promise<void> {
    try {
      const { child } = await this.respawn();
      if (this.stopping) {
        await stopChild(child);
        return;
      }
      this.child = child;
      this.startedAt = Date.now();
      this.restarts++;
      this.state = 'running';
      this.watch(child);
      this.log.info({ pid: child.pid, restarts: this.restarts }, 'database launcher restarted');
    } catch (err) {
      if (this.stopping) return;
      this.log.error({ err: (err as Error).message }, 'database launcher failed to restart');
      this.schedule();
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.state = 'stopped';
    clearTimeout(this.timer);
    await stopChild(this.child);
  }
}

async function startMongod(dataDir: string): Promise<Database> {
  const dbpath = join(dataDir, 'mongod');
  mkdirSync(dbpath, { recursive: true });
  const port = await freePort();
  const child = spawn('mongod', ['--dbpath', dbpath, '--bind_ip', '127.0.0.1', '--port', String(port), '--quiet'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForPort(port, child, 30_000);
  return { uri: `mongodb://127.0.0.1:${port}/?directConnection=true`, source: `mongod (${dbpath})`, stop: () => stopChild(child) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ port, host: '127.0.0.1' });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`did not listen on port ${port} within ${timeoutMs / 1000} s`);
}

/** SIGTERM, then SIGKILL after 10 s. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
