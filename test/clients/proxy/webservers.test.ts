// The nginx and Caddy recipes of docs/proxy.md, as written there, in front of a
// running service: each web server from Debian's package, started on
// loopback as a process of its own with a generated configuration in a
// temporary directory. Through it: the agent script with its ETag, an
// identify from another loopback address that sets the device cookie, and a
// second one with only that cookie that finds the same visitor; and, in
// front of a recording server, what the recipe forwards (only the device
// cookie, no credentials, the proxy's headers). Skipped, with a message,
// where the binary is not installed (.ci/run installs both).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_COOKIE, PROXY_HEADERS } from '../../../contract/proxy.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { freePort, json, listenApp, scripted, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody, withoutToken } from '../../support/signals.js';

const PROXY_DOC = readFileSync(fileURLToPath(new URL('../../../docs/proxy.md', import.meta.url)), 'utf8');
const NGINX = '/usr/sbin/nginx';
const CADDY = '/usr/bin/caddy';

/** The recipe of that name in docs/proxy.md (the fenced block after its marker). */
function recipe(name: string): string {
  const m = new RegExp(`<!-- recipe:${name} -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(PROXY_DOC);
  if (!m) throw new Error(`docs/proxy.md has no ${name} recipe`);
  return m[1]!;
}

/** Waits until something accepts connections on the port (or the process exits). */
async function reachable(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}: ${log()}`);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request from 127.0.0.2, so that the address the service reports can only have come from the proxy's header. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, localAddress: '127.0.0.2', method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const BROWSER = {
  'content-type': 'application/json',
  origin: 'https://shop.example.com',
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  'accept-language': 'en-GB,en;q=0.9',
  authorization: 'Bearer shop-session-token',
  [PROXY_HEADERS.error]: 'timeout; at=1',
};
const deviceCookie = (a: Answer) => ([a.headers['set-cookie']].flat().find((c) => c?.startsWith(`${DEVICE_COOKIE}=`)) ?? '').split(';')[0]!;

interface WebServer {
  name: string;
  binary: string;
  /** Writes the configuration for the two sites (to the service, to the recorder) and returns the command. */
  configure(dir: string, sites: Array<{ port: number; upstream: string }>, secret: string): { args: string[]; env?: Record<string, string> };
}

const substitute = (text: string, upstream: string, secret: string) =>
  text.replaceAll('https://deviceid.example.com', upstream).replaceAll('svc_proxy_YOUR_SECRET', secret);

const SERVERS: WebServer[] = [
  {
    name: 'nginx',
    binary: NGINX,
    configure(dir, sites, secret) {
      const [httpPart, locationPart] = recipe('nginx').split("# In your site's server block:\n") as [string, string];
      const servers = sites.map(
        ({ port, upstream }) => `server {\n listen 127.0.0.1:${port};\n server_name shop.example.com;\n${substitute(locationPart, upstream, secret)}\n}`,
      );
      const temp = ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t === 'body' ? 'client_body' : t}_temp_path ${join(dir, t)};`).join('\n');
      writeFileSync(
        join(dir, 'nginx.conf'),
        `worker_processes 1;\ndaemon off;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')} warn;\nevents { worker_connections 64; }\nhttp {\naccess_log off;\nclient_body_buffer_size 512k;\n${temp}\n${httpPart}\n${servers.join('\n')}\n}\n`,
      );
      return { args: ['-c', join(dir, 'nginx.conf'), '-p', dir] };
    },
  },
  {
    name: 'Caddy',
    binary: CADDY,
    configure(dir, sites, secret) {
      const site = recipe('caddy');
      const blocks = sites.map(({ port, upstream }) => substitute(site, upstream, secret).replace('shop.example.com {', `http://127.0.0.1:${port} {`));
      writeFileSync(join(dir, 'Caddyfile'), `{\n\tadmin off\n\tauto_https off\n}\n${blocks.join('\n')}`);
      return { args: ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir } };
    },
  },
];

let h: Harness;
let service: Listening;
let live: string;
let secret: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  service = await listenApp(h.app);
  const c = await signUp(h);
  live = await c.key('live');
  secret = (await c.agent.post(`/api/projects/${c.projectId}/proxy/secret`).set('origin', c.origin).send({})).body.secret;
});
afterAll(async () => {
  await service?.close();
  await h?.close();
});

for (const server of SERVERS) {
  const installed = existsSync(server.binary);
  if (!installed)
    console.warn(`${server.name} is not installed (${server.binary}): its recipe's test is skipped (apt-get install ${server.name.toLowerCase()})`);

  describe.skipIf(!installed)(`docs/proxy.md's ${server.name} recipe`, () => {
    let dir: string;
    let child: ChildProcess;
    let recorder: Awaited<ReturnType<typeof scripted>>;
    let toService: number;
    let toRecorder: number;
    let output = '';

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `deviceid-${server.name.toLowerCase()}-`));
      // nginx's workers may run as another user: they need to reach the directory.
      chmodSync(dir, 0o755);
      mkdirSync(join(dir, 'proxy'));
      recorder = await scripted((_req, _n, res) => json(res, 200, { ok: true }));
      [toService, toRecorder] = [await freePort(), await freePort()];
      const { args, env } = server.configure(
        dir,
        [
          { port: toService, upstream: service.url },
          { port: toRecorder, upstream: recorder.url },
        ],
        secret,
      );
      child = spawn(server.binary, args, { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      const log = () => output + (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
      await reachable(toService, child, log);
      await reachable(toRecorder, child, log);
    }, 60_000);

    afterAll(async () => {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await recorder?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('serves the agent script with the service’s ETag', async () => {
      const script = await send(toService, 'GET', '/metrics/agent.js', {});
      expect(script.status, output).toBe(200);
      expect(script.body).toMatch(/DeviceId/);
      const etag = script.headers.etag as string;
      expect(etag).toMatch(/^"[\w-]{27}"$/);
      expect((await send(toService, 'GET', '/metrics/agent.js', { 'if-none-match': etag })).status).toBe(304);
    });

    it('one identify sets the device cookie, and the cookie alone brings the same visitor back', async () => {
      const device = deviceValues(500 + SERVERS.indexOf(server));
      const headers = { ...BROWSER, 'x-api-key': live, cookie: 'shop_session=s3cr3t; _ga=GA1.2.3' };
      const first = await send(toService, 'POST', '/metrics/v1/identify', headers, JSON.stringify(identifyBody(device)));
      expect(first.status, first.body).toBe(200);
      const result = JSON.parse(first.body) as { visitorId: string; ip: string };
      // The service's socket peer is the web server (127.0.0.1); the browser was 127.0.0.2.
      expect(result.ip).toBe('127.0.0.2');
      const cookie = deviceCookie(first);
      expect(cookie).toMatch(new RegExp(`^${DEVICE_COOKIE}=1\\.[\\w-]{22}\\.[\\w-]{22}$`));
      expect([first.headers['set-cookie']].flat()[0]).toContain('HttpOnly; SameSite=Lax');
      h.clock.advance(8 * 24 * 3_600_000);
      const again = await send(
        toService,
        'POST',
        '/metrics/v1/identify',
        { ...headers, cookie: `shop_session=s3cr3t; ${cookie}` },
        JSON.stringify(identifyBody(withoutToken(device))),
      );
      expect(again.status, again.body).toBe(200);
      expect((JSON.parse(again.body) as { visitorId: string }).visitorId).toBe(result.visitorId);
      expect(deviceCookie(again)).toBe(cookie);
    });

    it('forwards the device cookie alone, no credentials, and the proxy’s headers', async () => {
      await send(toRecorder, 'POST', '/metrics/v1/identify', { ...BROWSER, cookie: `a=1; ${DEVICE_COOKIE}=1.tok.mac; b=2` }, '{"signals":{}}');
      await send(toRecorder, 'POST', '/metrics/v1/identify', { ...BROWSER, cookie: 'a=1; b=2' }, '{}');
      const [withCookie, without] = recorder.seen.slice(-2) as [(typeof recorder.seen)[0], (typeof recorder.seen)[0]];
      expect(withCookie.url).toBe('/v1/identify');
      expect(withCookie.body).toBe('{"signals":{}}');
      expect(withCookie.headers.cookie).toBe(`${DEVICE_COOKIE}=1.tok.mac`);
      expect(without.headers.cookie).toBeUndefined();
      for (const seen of [withCookie, without]) {
        expect(seen.headers.authorization).toBeUndefined();
        expect(seen.headers[PROXY_HEADERS.error]).toBeUndefined();
        expect(seen.headers).toMatchObject({
          [PROXY_HEADERS.secret]: secret,
          [PROXY_HEADERS.clientIp]: '127.0.0.2',
          [PROXY_HEADERS.host]: '127.0.0.1',
          [PROXY_HEADERS.proto]: 'http',
          origin: BROWSER.origin,
          'user-agent': BROWSER['user-agent'],
        });
      }
    });
  });
}
