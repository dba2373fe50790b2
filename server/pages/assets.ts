// Page scripts and the stylesheet, served from memory. Each script is a small
// TypeScript file bundled by esbuild at start-up (or on first request, in
// tests) and kept for the life of the process (as /agent.js is).
import { isAppRoute, type AppRouter } from '@ts-rest/core';
import { build, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { contract } from '../../contract/index.js';
import { BROWSER_BUILD } from '../browserBuild.js';
import { repoFile } from '../paths.js';

const SCRIPTS = {
  'login.js': repoFile('server/pages/login/browser.ts'),
  'cli-consent.js': repoFile('server/pages/consent/browser.ts'),
  'dashboard.js': repoFile('server/pages/dashboard/browser.ts'),
  // The dashboard's Rules, Lists and Review pages, loaded when first shown (dashboard/lazy.ts).
  'decisions.js': repoFile('server/pages/dashboard/decisions/browser.ts'),
  'home.js': repoFile('server/pages/home/browser.ts'),
  'demo.js': repoFile('server/pages/demo/browser.ts'),
} as const;
const STYLESHEET = repoFile('server/pages/browser/pages.css');

export type ScriptName = keyof typeof SCRIPTS;
export const scriptPath = (name: ScriptName) => `/assets/${name}`;
export const STYLESHEET_PATH = '/assets/pages.css';

const cache = new Map<string, Promise<string>>();

const ROUTES = fileURLToPath(repoFile('server/pages/browser/routes.ts'));
const ZOD_STUB = fileURLToPath(repoFile('server/pages/browser/zodStub.ts'));

/** The path most routes start with: written once in page bundles. */
const PROJECT_PATH = '/api/projects/:projectId';

/**
 * A router with each route's method and path only, all the page client needs
 * at run time, as a module's source: each route a call of one small function,
 * its path without the common start (4.5 KB where the same data as JSON
 * literals took 7.5 KB). Pure: a bundle that never calls the API
 * (decisions.js) leaves them out.
 */
function routesModule(router: AppRouter): string {
  const path = (p: string) => JSON.stringify(p.startsWith(`${PROJECT_PATH}/`) ? `~${p.slice(PROJECT_PATH.length)}` : p);
  const literal = (r: AppRouter): string =>
    `{${Object.entries(r)
      .map(
        ([name, value]) =>
          `${JSON.stringify(name)}:${isAppRoute(value) ? `/* @__PURE__ */ r(${JSON.stringify(value.method)},${path(value.path)})` : literal(value)}`,
      )
      .join(',')}}`;
  return `const r=(method,path)=>({method,path:path.replace(/^~/,${JSON.stringify(PROJECT_PATH)}),responses:{}});export const routes=${literal(router)};`;
}

/**
 * Pages call the API through the ts-rest client of the contract (browser/
 * client.ts), which at run time needs only each route's method and path:
 * the contract module comes to page bundles as that (browser/routes.ts), and
 * zod, which @ts-rest/core still imports, as a stub (browser/zodStub.ts).
 * The server validates (dashboard.js: 150 KB with zod and the contract, 32 KB without).
 */
const onlyRoutes: Plugin = {
  name: 'only-routes',
  setup(b) {
    b.onLoad({ filter: /[\\/]server[\\/]pages[\\/]browser[\\/]routes\.ts$/ }, (args) =>
      args.path === ROUTES ? { contents: routesModule(contract), loader: 'js' } : undefined,
    );
    b.onResolve({ filter: /^(zod|@anatine\/zod-openapi)$/ }, () => ({ path: ZOD_STUB }));
  },
};

async function bundle(entry: URL): Promise<string> {
  const result = await build({ ...BROWSER_BUILD, entryPoints: [fileURLToPath(entry)], plugins: [onlyRoutes] });
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

/** Every page script and the stylesheet, built at start-up: the first visitor of a page does not wait for esbuild. */
export const preparePageAssets = async (): Promise<void> => {
  await Promise.all([...(Object.keys(SCRIPTS) as ScriptName[]).map(pageScript), stylesheet()]);
};
