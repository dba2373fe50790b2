import type { SignalName, SignalValues } from '@deviceid/contract';
import type { Context } from './context.js';

/** Collects one signal; a throw or a timeout drops the signal from the request. */
export interface Collector<K extends SignalName> {
  /** Milliseconds before the signal is abandoned (default 1000). */
  timeout?: number;
  collect(ctx: Context): SignalValues[K] | Promise<SignalValues[K]>;
}

export type Collectors<K extends SignalName> = { [P in K]: Collector<P> };
