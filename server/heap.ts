// The V8 heap cap our processes run with. Node's default lets the old space
// grow to a quarter of the machine's memory, and V8 collects late when it
// may grow: under a stream of new devices a server whose live heap is about
// 130 MB reached 580 MB of RSS, garbage mostly. A cap sized for what the
// process keeps (its modules and IP data, and the visitor cache) makes V8
// collect before it grows (bench/memory.ts; README: Memory). An operator's
// own --max-old-space-size (command line or NODE_OPTIONS) wins.

/** The heap a process keeps without its visitor cache, with room for requests in flight (MB). */
const BASE_MB = 160;
/** Heap per cached visitor, with room: its deflated document's wrapper, its token entries and the LRU's bookkeeping (KB). */
const PER_VISITOR_KB = 2;

/** config.ts's bound on VISITOR_CACHE_SIZE. */
export const MAX_VISITOR_CACHE_SIZE = 10_000_000;

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
 * (or its default) read as config.ts reads it, none when config.ts will
 * refuse it (the server then says why). `nodeOptions`: the operator's
 * NODE_OPTIONS, which the helper itself runs without.
 */
export function heapFlagsFromEnv(env: NodeJS.ProcessEnv, defaultCacheSize: number, nodeOptions = env.NODE_OPTIONS ?? ''): string[] {
  // As config.ts: an empty value is unset, and the number as z.coerce.number() reads it.
  const raw = env.VISITOR_CACHE_SIZE;
  const size = raw === undefined || raw === '' ? defaultCacheSize : Number(raw);
  if (!Number.isInteger(size) || size < 0 || size > MAX_VISITOR_CACHE_SIZE) return [];
  return heapFlags(size, [], nodeOptions);
}
