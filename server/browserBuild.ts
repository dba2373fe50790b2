// How the server bundles code for browsers (the agent at /agent.js, the
// pages' scripts): one minified classic script per entry, built in memory.
import type { BuildOptions } from 'esbuild';

export const BROWSER_BUILD = {
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  // ES2019 syntax for 2020+ browsers. Safari starts at 15 because esbuild
  // cannot lower destructuring for older Safari's destructuring bugs.
  target: ['es2019', 'chrome80', 'edge80', 'firefox78', 'safari15'],
  minify: true,
  legalComments: 'none',
  logLevel: 'silent',
} as const satisfies BuildOptions;
