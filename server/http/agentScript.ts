// The browser agent served at /agent.js: clients/agent bundled into one
// minified classic script that defines the global `DeviceId`, built once per
// process (about 0.3 s) and kept in memory.
import { createHash } from 'node:crypto';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { repoFile } from '../paths.js';

// The checkout's source, also from the compiled server (dist/server/).
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

let script: Promise<{ js: string; etag: string }> | undefined;

/** The script and its strong ETag (a hash of its text): browsers and first-party proxies revalidate with If-None-Match. */
export function agentScript(): Promise<{ js: string; etag: string }> {
  script ??= buildAgent().then((js) => ({ js, etag: `"${createHash('sha256').update(js).digest('base64url').slice(0, 27)}"` }));
  return script;
}
