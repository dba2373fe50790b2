// The published packages as a consumer gets them: build, `npm pack` every
// workspace package, install the tarballs into a scratch project outside the
// repository (os tmpdir), then import them from ESM, CommonJS and strict
// TypeScript (node16 and bundler resolution, skipLibCheck false) and call the
// live test server through them: identify, get event, visits, device flow.
// npm resolves the packages' dependencies from the cache the repository's own
// install filled (falling back to the registry for metadata it lacks).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type Customer } from '../support/dashboard.js';
import { authorizeGrant } from '../support/deviceflow.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listenApp, type Listening } from '../support/httpServer.js';
import { deviceValues, identifyBody } from '../support/signals.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['contract', 'clients/node', 'clients/cli', 'clients/agent', 'clients/proxy'];
const NAMES = ['@deviceid/contract', '@deviceid/client', '@deviceid/cli', '@deviceid/agent', '@deviceid/proxy'];
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
const TYPES_NODE: string = lock.packages['node_modules/@types/node'].version;

function sh(cmd: string, args: string[], cwd: string, timeout = 180_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

let scratch: string;
let h: Harness;
let srv: Listening;
let c: Customer;

beforeAll(async () => {
  // The builds the tarballs contain (skipped when the sources did not change).
  sh(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-changed'], ROOT, 300_000);
  scratch = mkdtempSync(join(tmpdir(), 'deviceid-consumer-'));
  for (const dir of PACKAGES) sh('npm', ['pack', '--silent', '--pack-destination', scratch], join(ROOT, dir));
  const tarballs = readdirSync(scratch).filter((f) => f.endsWith('.tgz'));
  expect(tarballs).toHaveLength(PACKAGES.length);
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'scratch-consumer', private: true, type: 'module', dependencies: Object.fromEntries(tarballs.map((t) => [t, `file:./${t}`])) }),
  );
  const install = [
    'install',
    '--no-audit',
    '--no-fund',
    '--ignore-scripts',
    '--no-package-lock',
    ...tarballs.map((t) => `./${t}`),
    `@types/node@${TYPES_NODE}`,
  ];
  try {
    sh('npm', [...install, '--offline'], scratch);
  } catch {
    sh('npm', [...install, '--prefer-offline'], scratch);
  }

  h = await createHarness(import.meta.filename);
  srv = await listenApp(h.app);
  c = await signUp(h);
}, 600_000);

afterAll(async () => {
  await srv?.close();
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs a script in the scratch project; the user code of a device flow is approved as it appears on stderr. */
function runIn(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [file], { cwd: scratch, env: { ...process.env, ...env }, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  let approved = false;
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => {
    stderr += d;
    const m = /USER_CODE=(\S+)/.exec(stderr);
    if (m && !approved) {
      approved = true;
      void authorizeGrant(c, m[1]!).then((r) => {
        if (r.status !== 200) child.kill();
      });
    }
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('published packages', () => {
  it('install without the server, its database driver or IP data', () => {
    const installed = readdirSync(join(scratch, 'node_modules'));
    for (const heavy of ['mongodb', 'express', '@ip-location-db', 'maxmind', 'esbuild', 'pino']) expect(installed).not.toContain(heavy);
    for (const name of NAMES) {
      const pkg = JSON.parse(readFileSync(join(scratch, 'node_modules', name, 'package.json'), 'utf8'));
      expect(pkg).toMatchObject({ license: 'Apache-2.0', version: expect.any(String) });
      expect(pkg.private).toBeUndefined();
      expect(existsSync(join(scratch, 'node_modules', name, 'LICENSE'))).toBe(true);
      // Only what a consumer needs: no sources, tests or build configuration.
      const files = readdirSync(join(scratch, 'node_modules', name));
      expect(files.filter((f) => f.endsWith('.ts') || f.startsWith('tsconfig'))).toEqual([]);
    }
  });

  it('type-check for consumers: strict, skipLibCheck false, moduleResolution node16 and bundler', () => {
    writeFileSync(
      join(scratch, 'consumer.ts'),
      `import { contract, IdentifyResultSchema, type IdentifyResultBody } from '@deviceid/contract';
import { createServerClient, createIdentifyClient, NotFoundError, RateLimitError, ConflictError, protect, protectFetch, type Claim, type FullEvent, type Ruleset, type Visit } from '@deviceid/client';
import { authorizeDevice, loadCredential, type AuthorizeDeviceResult } from '@deviceid/cli';
import { load, type Agent, type IdentifyResult } from '@deviceid/agent';
import { createProxyHandler, createProxyMiddleware, type ProxyHandler } from '@deviceid/proxy';
import { createServer } from 'node:http';

const proxy: ProxyHandler = createProxyHandler({ serviceUrl: 'https://id.example.com', secret: 'svc_proxy_x', clientIp: { header: 'x-forwarded-for', hops: 1 } });
export const served: Promise<Response> = proxy(new Request('https://shop.example.com/metrics/agent.js'));
const middleware = createProxyMiddleware({ serviceUrl: 'https://id.example.com', secret: 'svc_proxy_x' });
export const server = createServer((req, res) => middleware(req, res, () => res.end()));
const guard = protect({ baseUrl: 'https://id.example.com', secretKey: 'svc_secret_x', onRefused: (r, _req, res) => { res.statusCode = r.response.status; res.end(r.reason); } });
export const guarded = createServer((req, res) => guard(req, res, () => res.end((req as { deviceid?: Claim }).deviceid?.decision.action ?? 'none')));
export const POST: (request: Request) => Promise<Response> = protectFetch(async (_request, deviceid: Claim | null) => new Response(deviceid?.visitorId ?? 'none'), { baseUrl: 'https://id.example.com', secretKey: 'svc_secret_x', failOpen: true });
export const edge: ProxyHandler = createProxyHandler({ serviceUrl: 'https://id.example.com', secret: 'svc_proxy_x', protect: { secretKey: 'svc_secret_x', paths: [{ method: 'POST', path: '/login' }, { path: new RegExp('^/admin/') }], forward: (r) => fetch(r) } });
export async function rules(baseUrl: string, secretKey: string): Promise<Ruleset> {
  const c = createServerClient({ baseUrl, secretKey });
  for await (const e of c.allListEntries('blocked')) void e.value;
  try { await c.claimEvent('req_x'); } catch (e) { if (e instanceof ConflictError) void e.serverCode; }
  return c.putRuleset({ rules: [{ name: 'bots', expression: 'verdicts.bot.result', action: 'block', response: { status: 403 } }] });
}

export async function flow(baseUrl: string, secretKey: string, apiKey: string, body: Parameters<ReturnType<typeof createIdentifyClient>['identify']>[0]): Promise<FullEvent> {
  const r: IdentifyResultBody = await createIdentifyClient({ baseUrl, apiKey }).identify(body);
  const server = createServerClient({ baseUrl, secretKey });
  const event = await server.getEvent(r.requestId);
  const bot: boolean = event.verdicts.bot.result;
  for await (const v of server.visits(event.visitorId)) { const visit: Visit = v; void visit.timestamp; }
  const grant: AuthorizeDeviceResult = await authorizeDevice({ baseUrl, clientName: 'x', onVerification: () => {} });
  const agent: Agent = await load({ apiKey, endpoint: baseUrl });
  const fromAgent: IdentifyResult = await agent.get({ linkedId: 'user-1' });
  void bot; void grant.apiKey; void ('sealedResult' in fromAgent ? fromAgent.sealedResult : fromAgent.visitorId); void contract.identify.identify.path; void IdentifyResultSchema;
  void NotFoundError; void RateLimitError; void loadCredential;
  return event;
}
`,
    );
    writeFileSync(
      join(scratch, 'consumer.cts'),
      `import client = require('@deviceid/client');
import cli = require('@deviceid/cli');
import contract = require('@deviceid/contract');
import agent = require('@deviceid/agent');
import proxy = require('@deviceid/proxy');
export const load: typeof agent.load = agent.load;
export const handler: proxy.ProxyHandler = proxy.createProxyHandler({ serviceUrl: 'https://id.example.com', secret: 'svc_proxy_x' });
export const server: client.ServerClient = client.createServerClient({ baseUrl: 'http://x', secretKey: 'svc_secret_x' });
export const f: typeof cli.authorizeDevice = cli.authorizeDevice;
export const p: string = contract.contract.events.getEvent.path;
`,
    );
    for (const [name, module, moduleResolution, files] of [
      ['node16', 'node16', 'node16', ['consumer.ts', 'consumer.cts']],
      ['bundler', 'esnext', 'bundler', ['consumer.ts']],
    ] as const) {
      const config = `tsconfig.${name}.json`;
      writeFileSync(
        join(scratch, config),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            skipLibCheck: false,
            noEmit: true,
            module,
            moduleResolution,
            target: 'ES2022',
            lib: ['ES2023', 'DOM'],
            types: ['node'],
          },
          files,
        }),
      );
      const r = spawnSync(process.execPath, [TSC, '-p', config], { cwd: scratch, encoding: 'utf8' });
      expect(r.stdout + r.stderr, `tsc (${name})`).toBe('');
      expect(r.status).toBe(0);
    }
  }, 300_000);

  it('ESM: identify, the full event, visits and the device flow against the live server', async () => {
    const apiKey = await c.key('live');
    const secretKey = await c.key('secret');
    writeFileSync(
      join(scratch, 'esm.mjs'),
      `import { contract } from '@deviceid/contract';
import { createIdentifyClient, createServerClient, NotFoundError } from '@deviceid/client';
import { authorizeDevice } from '@deviceid/cli';
import { load } from '@deviceid/agent';
import { createProxyHandler } from '@deviceid/proxy';
const { BASE_URL: baseUrl, API_KEY: apiKey, SECRET_KEY: secretKey, BODY, PROXY_SECRET, PROXY_BODY } = process.env;
const out = {};
const proxy = createProxyHandler({ serviceUrl: baseUrl, secret: PROXY_SECRET, clientIp: 'x-real-ip' });
const proxied = await proxy(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-real-ip': '81.2.69.142' }, body: PROXY_BODY }));
out.proxied = { status: proxied.status, cookie: proxied.headers.getSetCookie()[0].split(';')[0].split('=')[0], ip: (await proxied.json()).ip };
const id = await createIdentifyClient({ baseUrl, apiKey }).identify(JSON.parse(BODY));
out.identify = id;
const server = createServerClient({ baseUrl, secretKey });
out.event = await server.getEvent(id.requestId);
out.visits = await server.getVisits(id.visitorId);
try { await server.getEvent('req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'); } catch (e) { out.notFound = e instanceof NotFoundError; }
const grant = await authorizeDevice({ baseUrl, clientName: 'consumer-esm', onVerification: (v) => { process.stderr.write('USER_CODE=' + v.userCode + '\\n'); } });
out.deviceKey = grant.apiKey.slice(0, 9);
out.contractPath = contract.identify.identify.path;
out.agentLoad = typeof load;
process.stdout.write(JSON.stringify(out));
`,
    );
    const body = identifyBody(deviceValues(4242), { linkedId: 'consumer-esm' });
    const proxySecret = (await c.agent.post(`/api/projects/${c.projectId}/proxy/secret`).set('origin', c.origin).send({})).body.secret as string;
    const r = await runIn('esm.mjs', {
      BASE_URL: srv.url,
      API_KEY: apiKey,
      SECRET_KEY: secretKey,
      BODY: JSON.stringify(body),
      PROXY_SECRET: proxySecret,
      PROXY_BODY: JSON.stringify(identifyBody(deviceValues(4245))),
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.identify.visitorId).toMatch(/^iq_/);
    expect(out.event).toMatchObject({ requestId: out.identify.requestId, visitorId: out.identify.visitorId, linkedId: 'consumer-esm' });
    expect(out.visits).toMatchObject({ totalVisits: 1 });
    expect(out.visits.visits[0]).toMatchObject({ timestamp: out.identify.timestamp });
    expect(out).toMatchObject({ notFound: true, deviceKey: 'svc_live_', contractPath: '/v1/identify', agentLoad: 'function' });
    expect(out.proxied).toEqual({ status: 200, cookie: '_didh', ip: '81.2.69.142' });
  }, 60_000);

  it('CommonJS: require() of contract, client, cli and agent, calling the live server', async () => {
    const secretKey = await c.key('secret');
    const apiKey = await c.key('test');
    writeFileSync(
      join(scratch, 'cjs.cjs'),
      `const { contract } = require('@deviceid/contract');
const { createIdentifyClient, createServerClient, AuthError, protect } = require('@deviceid/client');
const { authorizeDevice, EXIT } = require('@deviceid/cli');
const { load } = require('@deviceid/agent');
const { createProxyMiddleware } = require('@deviceid/proxy');
(async () => {
  const { BASE_URL: baseUrl, API_KEY: apiKey, SECRET_KEY: secretKey, BODY } = process.env;
  const id = await createIdentifyClient({ baseUrl, apiKey }).identify(JSON.parse(BODY));
  const event = await createServerClient({ baseUrl, secretKey }).getEvent(id.requestId);
  let auth = false;
  try { await createServerClient({ baseUrl, secretKey: 'svc_secret_' + 'x'.repeat(38) }).getEvent(id.requestId); } catch (e) { auth = e instanceof AuthError; }
  process.stdout.write(JSON.stringify({ same: event.requestId === id.requestId, auth, path: contract.events.getEvent.path, flow: typeof authorizeDevice, ok: EXIT.OK, agent: typeof load, proxy: typeof createProxyMiddleware, protect: typeof protect }));
})().catch((e) => { console.error(e); process.exit(1); });
`,
    );
    const r = await runIn('cjs.cjs', { BASE_URL: srv.url, API_KEY: apiKey, SECRET_KEY: secretKey, BODY: JSON.stringify(identifyBody(deviceValues(4343))) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      same: true,
      auth: true,
      path: '/v1/events/:requestId',
      flow: 'function',
      ok: 0,
      agent: 'function',
      proxy: 'function',
      protect: 'function',
    });
  }, 60_000);

  it('the deviceid command starts from the installed package', () => {
    const r = spawnSync(join(scratch, 'node_modules/.bin/deviceid'), ['--help'], { cwd: scratch, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain('deviceid <login|logout|status>');
  });

  it('the agent package ships the classic script that defines DeviceId', () => {
    const js = readFileSync(join(scratch, 'node_modules/@deviceid/agent/dist/deviceid.global.js'), 'utf8');
    expect(js).toMatch(/^(var|"use strict";var) DeviceId=/);
  });

  it('@deviceid/proxy alone: a tarball of at most 50 KB, no dependency, types for node16 and bundler without Node’s (a worker’s view)', () => {
    const alone = mkdtempSync(join(tmpdir(), 'deviceid-proxy-alone-'));
    try {
      const tarball = readdirSync(scratch).find((f) => f.startsWith('deviceid-proxy-') && f.endsWith('.tgz'))!;
      const size = statSync(join(scratch, tarball)).size;
      console.log(`@deviceid/proxy tarball: ${size} bytes`);
      expect(size).toBeLessThanOrEqual(50 * 1024);
      const pkg = JSON.parse(readFileSync(join(ROOT, 'clients/proxy/package.json'), 'utf8'));
      expect(pkg.dependencies ?? {}).toEqual({});
      writeFileSync(join(alone, 'package.json'), JSON.stringify({ name: 'proxy-alone', private: true, type: 'module' }));
      const install = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', join(scratch, tarball)];
      try {
        sh('npm', [...install, '--offline'], alone);
      } catch {
        sh('npm', [...install, '--prefer-offline'], alone);
      }
      expect(readdirSync(join(alone, 'node_modules')).filter((f) => !f.startsWith('.'))).toEqual(['@deviceid']);
      expect(readdirSync(join(alone, 'node_modules/@deviceid'))).toEqual(['proxy']);
      writeFileSync(
        join(alone, 'worker.ts'),
        `import { createProxyHandler, createProxyMiddleware, type ProxyHandlerOptions } from '@deviceid/proxy';
const options: ProxyHandlerOptions = { serviceUrl: 'https://id.example.com', secret: 'svc_proxy_x', pathPrefix: '/metrics', clientIp: 'cf-connecting-ip', cookieDomain: 'example.com', timeoutMs: 3000 };
const proxy = createProxyHandler(options);
export default { fetch: (request: Request): Promise<Response> => proxy(request) };
export const owns: boolean = proxy.owns('/metrics/agent.js');
export const mw = createProxyMiddleware({ serviceUrl: 'https://id.example.com', secret: 'svc_proxy_x', clientIp: (req) => req.ip });
`,
      );
      for (const [module, moduleResolution] of [
        ['node16', 'node16'],
        ['esnext', 'bundler'],
      ] as const) {
        const config = `tsconfig.${moduleResolution}.json`;
        writeFileSync(
          join(alone, config),
          JSON.stringify({
            compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, module, moduleResolution, target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] },
            files: ['worker.ts'],
          }),
        );
        const r = spawnSync(process.execPath, [TSC, '-p', config], { cwd: alone, encoding: 'utf8' });
        expect(r.stdout + r.stderr, `tsc (${moduleResolution})`).toBe('');
        expect(r.status).toBe(0);
      }
      // It runs from both module systems.
      const esm = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', "import('@deviceid/proxy').then((m) => console.log(typeof m.createProxyHandler))"],
        { cwd: alone, encoding: 'utf8' },
      );
      expect(esm.stdout.trim(), esm.stderr).toBe('function');
      const cjs = spawnSync(process.execPath, ['-e', "console.log(typeof require('@deviceid/proxy').createProxyMiddleware)"], { cwd: alone, encoding: 'utf8' });
      expect(cjs.stdout.trim(), cjs.stderr).toBe('function');
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  }, 120_000);
});
