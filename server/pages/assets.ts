// Page scripts and the stylesheet, served from memory. Each script is a small
// TypeScript file bundled by esbuild on first request and kept for the life
// of the process (as /agent.js is).
import { build, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { repoFile } from '../paths.js';

const SCRIPTS = {
  'login.js': repoFile('server/pages/login/browser.ts'),
  'cli-consent.js': repoFile('server/pages/consent/browser.ts'),
  'dashboard.js': repoFile('server/pages/dashboard/browser.ts'),
  'home.js': repoFile('server/pages/home/browser.ts'),
  'demo.js': repoFile('server/pages/demo/browser.ts'),
} as const;
const STYLESHEET = repoFile('server/pages/browser/pages.css');

export type ScriptName = keyof typeof SCRIPTS;
export const scriptPath = (name: ScriptName) => `/assets/${name}`;
export const STYLESHEET_PATH = '/assets/pages.css';

const cache = new Map<string, Promise<string>>();

/**
 * The contract imports zod as ESM while @anatine/zod-openapi require()s it,
 * which would bundle zod's CommonJS build as well: resolve both to the ESM one.
 */
const oneZod: Plugin = {
  name: 'one-zod',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, (args) =>
      args.kind === 'require-call' ? b.resolve('zod', { kind: 'import-statement', resolveDir: args.resolveDir }) : undefined,
    );
  },
};

async function bundle(entry: URL): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2019', 'chrome80', 'edge80', 'firefox78', 'safari15'],
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [oneZod],
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}

function memo(key: string, make: () => Promise<string>): Promise<string> {
  let p = cache.get(key);
  if (!p) {
    p = make();
    // A failed build is retried on the next request rather than cached.
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return p;
}

export function isScriptName(name: string): name is ScriptName {
  return Object.prototype.hasOwnProperty.call(SCRIPTS, name);
}

export const pageScript = (name: ScriptName) => memo(name, () => bundle(SCRIPTS[name]));
export const stylesheet = () => memo('pages.css', () => readFile(STYLESHEET, 'utf8'));
