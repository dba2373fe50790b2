// The browser agent served at /agent.js: clients/agent bundled into one
// minified classic script that defines the global `DeviceId`, built once per
// process (about 0.3 s) and kept in memory.
import { createHash } from 'node:crypto';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { BROWSER_BUILD } from '../browserBuild.js';
import { repoFile } from '../paths.js';

// The checkout's source, also from the compiled server (dist/server/).
const ENTRY = fileURLToPath(repoFile('clients/agent/index.ts'));

export async function buildAgent(): Promise<string> {
  const result = await build({ ...BROWSER_BUILD, entryPoints: [ENTRY], globalName: 'DeviceId' });
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
