// Bundles the browser agent into one minified classic script that defines
// the global `DeviceId`. The server builds it once at start-up for /agent.js.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { repoFile } from '../../server/paths.js';

// The checkout's source, also from the compiled server (dist/clients/agent/).
const ENTRY = fileURLToPath(repoFile('clients/agent/index.ts'));

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
