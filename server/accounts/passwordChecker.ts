// Password strength checks (passwordPolicy.ts) in a worker thread started
// on the first check and stopped once idle: zxcvbn's dictionaries take about
// 24 MB of heap and 50 MB of a process's memory, for sign-ups that come
// seldom, while identify runs all day. Loading them again costs the first
// sign-up after an idle spell about 0.2 s.
//
// A hostile password still costs about 0.1 s of the worker's CPU, so what
// one sign-up waits for is bounded: at most `maxPending` checks wait or run
// (another is refused at once with 503), checks go to the worker one at a
// time, and one that runs longer than `timeoutMs` fails with 503 and the
// worker is replaced (it is still busy with that check).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../errors.js';
import type { CheckAnswer, CheckRequest } from './passwordWorker.js';

/** How long the worker stays after its last check. */
export const PASSWORD_WORKER_IDLE_MS = 60_000;
/** What a refused or timed-out check tells the client to wait: the queue drains in well under a second. */
const RETRY_AFTER_S = 1;

export interface PasswordCheckerOptions {
  /** Checks waiting or running at once (PASSWORD_CHECK_QUEUE). */
  maxPending: number;
  /** How long one check may run (PASSWORD_CHECK_TIMEOUT_MS). */
  timeoutMs: number;
  idleMs?: number;
  /** Starts a worker that speaks passwordWorker.ts's protocol (tests: one that gets stuck). */
  startWorker?: () => Worker;
}

interface Check extends CheckRequest {
  resolve: (weakness: string | null) => void;
  reject: (err: Error) => void;
}

/**
 * The worker beside this file; from the sources (tests, `npm run dev`) its
 * TypeScript through tsx, registered in the worker itself (a worker's
 * execArgv takes no --import).
 */
function startPasswordWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./passwordWorker.js', import.meta.url));
  // tsx's ESM entry as its exports map names it (require.resolve would give the CommonJS one).
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('tsx/package.json');
  const { exports } = require(pkg) as { exports: Record<string, { import: { default: string } }> };
  const tsx = new URL(exports['./esm/api']!.import.default, pathToFileURL(pkg)).href;
  const entry = new URL('./passwordWorker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(entry)}); });`, { eval: true });
}

/** A running worker: whether its dictionaries are loaded, and the one check it is running. */
interface Running {
  worker: Worker;
  ready: boolean;
  inFlight: { check: Check; timer: NodeJS.Timeout } | null;
}

export class PasswordChecker {
  private current: Running | null = null;
  /** Checks not yet sent to the worker, oldest first. */
  private readonly queue: Check[] = [];
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly idleMs: number;
  private readonly maxPending: number;
  private readonly timeoutMs: number;

  private readonly startWorker: () => Worker;

  constructor({ maxPending, timeoutMs, idleMs = PASSWORD_WORKER_IDLE_MS, startWorker = startPasswordWorker }: PasswordCheckerOptions) {
    this.idleMs = idleMs;
    this.startWorker = startWorker;
    this.maxPending = maxPending;
    this.timeoutMs = timeoutMs;
  }

  /** Why the password is too weak, or null (passwordPolicy.ts `passwordWeakness`); 503 when too many checks are pending or this one takes too long. */
  weakness(password: string, personal: (string | undefined)[]): Promise<string | null> {
    if (this.pending >= this.maxPending) return Promise.reject(serviceUnavailable(RETRY_AFTER_S));
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    return new Promise((resolve, reject) => {
      this.queue.push({ password, personal, resolve, reject });
      this.next();
    });
  }

  /** Whether the worker is running (tests). */
  get running(): boolean {
    return this.current !== null;
  }

  /** Checks waiting or running. */
  private get pending(): number {
    return this.queue.length + (this.current?.inFlight ? 1 : 0);
  }

  /** Stops the worker now; pending checks fail. */
  async stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const running = this.current;
    this.current = null;
    const stopped = new Error('the password check worker exited (stopped)');
    for (const check of this.queue.splice(0)) check.reject(stopped);
    // Its exit fails the check it was running.
    if (running) await running.worker.terminate();
  }

  /** Sends the oldest waiting check to the worker once it is free (starting one if none runs). */
  private next(): void {
    const running = this.current ?? this.start();
    if (!running.ready || running.inFlight) return;
    const check = this.queue.shift();
    if (!check) {
      if (this.idleTimer) clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => void this.stop(), this.idleMs).unref();
      return;
    }
    const timer = setTimeout(() => this.timedOut(running), this.timeoutMs).unref();
    running.inFlight = { check, timer };
    running.worker.postMessage({ password: check.password, personal: check.personal } satisfies CheckRequest);
  }

  /** The worker is still busy with the check: it fails, and a new worker takes the waiting ones. */
  private timedOut(running: Running): void {
    const check = running.inFlight?.check;
    running.inFlight = null;
    check?.reject(serviceUnavailable(RETRY_AFTER_S));
    if (this.current === running) this.current = null;
    void running.worker.terminate();
    if (this.queue.length) this.next();
  }

  private start(): Running {
    const running: Running = { worker: this.startWorker(), ready: false, inFlight: null };
    const { worker } = running;
    // Never what keeps the process alive.
    worker.unref();
    worker.on('message', (answer: CheckAnswer) => {
      if (answer === 'ready') running.ready = true;
      else if (running.inFlight) {
        clearTimeout(running.inFlight.timer);
        running.inFlight.check.resolve(answer.weakness);
        running.inFlight = null;
      }
      if (this.current === running) this.next();
    });
    const fail = (err: Error) => {
      if (running.inFlight) {
        clearTimeout(running.inFlight.timer);
        running.inFlight.check.reject(err);
        running.inFlight = null;
      }
      if (this.current !== running) return;
      this.current = null;
      for (const check of this.queue.splice(0)) check.reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the password check worker exited (code ${code})`)));
    this.current = running;
    return running;
  }
}
