// Bundles the browser agent into one minified classic script that defines
// the global `DeviceId`. The server builds it once at start-up for /agent.js.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Next to this file from source; from the compiled server (dist/clients/agent/), the source in the checkout.
const ENTRY = [new URL('./index.ts', import.meta.url), new URL('../../../clients/agent/index.ts', import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((f) => existsSync(f)) ?? fileURLToPath(new URL('./index.ts', import.meta.url));

export async function buildAgent(): Promise<string> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'DeviceId',
    platform: 'browser',
    // ES2019 syntax for 2020+ browsers. Safari starts at 15 because esbuild
    // cannot lower destructuring for older Safari's destructuring bugs.
    target: ['es2019', 'chrome80', 'edge80', 'firefox78', 'safari15'],
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}
