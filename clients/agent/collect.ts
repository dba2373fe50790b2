// Starts every collector in turn, yielding to the page between slices of
// synchronous work; async collectors then run concurrently, each behind its
// own timeout. A signal that throws or hangs is left out and never delays the others.
import type { SignalName, SignalValues } from '@deviceid/contract';
import type { Collector } from './collector.js';
import { createContext, type Context } from './context.js';
import { collectors } from './signals/index.js';

export type SignalResults = { [K in SignalName]?: { value: SignalValues[K]; duration: number } };

const DEFAULT_TIMEOUT_MS = 1000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

/**
 * Starts one collector. Synchronous work is timed exactly; an async collector
 * is raced against its timeout. Never rejects: a failed signal is omitted and
 * the server lowers confidence accordingly.
 */
function start<K extends SignalName>(name: K, ctx: Context, out: SignalResults): Promise<void> {
  const collector = collectors[name] as Collector<K>;
  const t0 = performance.now();
  const save = (value: SignalValues[K]): void => {
    (out as { [P in K]?: { value: SignalValues[P]; duration: number } })[name] = { value, duration: round(performance.now() - t0) };
  };
  let result: SignalValues[K] | Promise<SignalValues[K]>;
  try {
    result = collector.collect(ctx);
  } catch {
    return Promise.resolve();
  }
  if (!(result instanceof Promise)) {
    save(result);
    return Promise.resolve();
  }
  return withTimeout(result, collector.timeout ?? DEFAULT_TIMEOUT_MS).then(save, () => undefined);
}

/** A macrotask boundary, so input and rendering can run between collectors. */
const yieldToPage = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** Synchronous work allowed before yielding, about one long task. */
const SLICE_MS = 50;

/** Collect all signals as the identify request's `signals` map. */
export async function collectSignals(): Promise<SignalResults> {
  const ctx = createContext();
  const out: SignalResults = {};
  const pending: Array<Promise<void>> = [];
  try {
    let sliceStart = performance.now();
    for (const name of Object.keys(collectors) as SignalName[]) {
      pending.push(start(name, ctx, out));
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToPage();
        sliceStart = performance.now();
      }
    }
    await Promise.all(pending);
  } finally {
    ctx.dispose();
  }
  return out;
}
