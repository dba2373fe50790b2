#!/usr/bin/env node
// Prints the heap flag `npm start` runs the compiled server with
// (server/heap.ts), sized from VISITOR_CACHE_SIZE; nothing when the
// operator's NODE_OPTIONS sets one or config.ts will refuse the value. Run
// without NODE_OPTIONS (a preload writing to stdout would land in node's
// arguments), which package.json passes as DEVICEID_NODE_OPTIONS; only a
// flag of the expected form is printed.
const { heapFlagsFromEnv } = await import('../dist/server/heap.js');
const flags = heapFlagsFromEnv(process.env, process.env.DEVICEID_NODE_OPTIONS ?? '');
process.stdout.write(flags.filter((f) => /^--max-old-space-size=\d+$/.test(f)).join(' '));
