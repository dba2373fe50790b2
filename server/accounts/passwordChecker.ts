// Password strength checks (passwordPolicy.ts) in a worker thread started
// on the first check and stopped once idle: zxcvbn's dictionaries take about
// 24 MB of heap and 50 MB of a process's memory, for sign-ups that come
// seldom, while identify runs all day. Loading them again costs the first
// sign-up after an idle spell about 0.2 s.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckAnswer, CheckRequest } from './passwordWorker.js';

/** How long the worker stays after its last check. */
export const PASSWORD_WORKER_IDLE_MS = 60_000;

interface Pending {
  resolve: (weakness: string | null) => void;
  reject: (err: Error) => void;
}

/**
 * The worker beside this file; from the sources (tests, `npm run dev`) its
 * TypeScript through tsx, registered in the worker itself (a worker's
 * execArgv takes no --import).
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./passwordWorker.js', import.meta.url));
  // tsx's ESM entry as its exports map names it (require.resolve would give the CommonJS one).
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('tsx/package.json');
  const { exports } = require(pkg) as { exports: Record<string, { import: { default: string } }> };
  const tsx = new URL(exports['./esm/api']!.import.default, pathToFileURL(pkg)).href;
  const entry = new URL('./passwordWorker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(entry)}); });`, { eval: true });
}

/** A running worker and the checks it owes. */
interface Running {
  worker: Worker;
  pending: Map<number, Pending>;
}

export class PasswordChecker {
  private current: Running | null = null;
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly idleMs = PASSWORD_WORKER_IDLE_MS) {}

  /** Why the password is too weak, or null (passwordPolicy.ts `passwordWeakness`). */
  weakness(password: string, personal: (string | undefined)[]): Promise<string | null> {
    const running = this.current ?? this.start();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      running.pending.set(id, { resolve, reject });
      running.worker.postMessage({ id, password, personal } satisfies CheckRequest);
    });
  }

  /** Whether the worker is running (tests). */
  get running(): boolean {
    return this.current !== null;
  }

  /** Stops the worker now; checks in flight fail. */
  async stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const running = this.current;
    this.current = null;
    if (running) await running.worker.terminate();
  }

  private start(): Running {
    const running: Running = { worker: startWorker(), pending: new Map() };
    const { worker, pending } = running;
    // Never what keeps the process alive.
    worker.unref();
    worker.on('message', ({ id, weakness }: CheckAnswer) => {
      pending.get(id)?.resolve(weakness);
      pending.delete(id);
      if (pending.size === 0 && this.current === running) this.idleTimer = setTimeout(() => void this.stop(), this.idleMs).unref();
    });
    const fail = (err: Error) => {
      if (this.current === running) this.current = null;
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the password check worker exited (code ${code})`)));
    this.current = running;
    return running;
  }
}
