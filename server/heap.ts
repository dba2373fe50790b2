// The V8 heap cap our processes run with. Node's default lets the old space
// grow to a quarter of the machine's memory, and V8 collects late when it
// may grow: under a stream of new devices a server whose live heap is about
// 130 MB reached 580 MB of RSS, garbage mostly. A cap sized for what the
// process keeps (its modules and IP data, and the visitor cache) makes V8
// collect before it grows (bench/memory.ts; docs/configuration.md, VISITOR_CACHE_SIZE). An operator's
// own --max-old-space-size (command line or NODE_OPTIONS) wins.
import { visitorCacheSizeSchema } from './config.js';

/** The heap a process keeps without its visitor cache, with room for requests in flight (MB). */
const BASE_MB = 160;
/** Heap per cached visitor, with room: its deflated document's wrapper, its token entries and the LRU's bookkeeping (KB). */
const PER_VISITOR_KB = 2;

/** The old space (MB) for a process holding `visitorCacheSize` visitors. */
export const heapCapMb = (visitorCacheSize: number): number => BASE_MB + Math.ceil((visitorCacheSize * PER_VISITOR_KB) / 1024);

/** Whether these Node options set the old space already. */
const capped = (options: readonly string[]) => options.some((o) => /^--max[-_]old[-_]space[-_]size(=|$)/.test(o));

/** The flag our processes start with, or none when the operator set one. */
export function heapFlags(visitorCacheSize: number, execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  if (capped(execArgv) || capped(nodeOptions.split(/\s+/))) return [];
  return [`--max-old-space-size=${heapCapMb(visitorCacheSize)}`];
}

/**
 * For `npm start` (scripts/heap-flags.mjs): the flag for VISITOR_CACHE_SIZE
 * read as config.ts reads it (empty is unset), none when config.ts will
 * refuse it (the server then says why). `nodeOptions`: the operator's
 * NODE_OPTIONS, which the helper itself runs without.
 */
export function heapFlagsFromEnv(env: NodeJS.ProcessEnv, nodeOptions = env.NODE_OPTIONS ?? ''): string[] {
  const size = visitorCacheSizeSchema.safeParse(env.VISITOR_CACHE_SIZE === '' ? undefined : env.VISITOR_CACHE_SIZE);
  return size.success ? heapFlags(size.data, [], nodeOptions) : [];
}
