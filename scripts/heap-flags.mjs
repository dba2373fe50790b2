#!/usr/bin/env node
// Prints the heap flag `npm start` runs the compiled server with
// (server/heap.ts), sized from VISITOR_CACHE_SIZE; nothing when NODE_OPTIONS
// sets one.
const { heapFlagsFromEnv } = await import('../dist/server/heap.js');
const { DEFAULT_VISITOR_CACHE_SIZE } = await import('../dist/server/config.js');
process.stdout.write(heapFlagsFromEnv(process.env, DEFAULT_VISITOR_CACHE_SIZE).join(' '));
