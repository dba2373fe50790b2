// The real process: `npm start`'s entry point prints its URL, serves, and on
// SIGTERM stops cleanly without leaving a database process behind.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_VISITOR_CACHE_SIZE } from '../../server/config.js';
import { DEVDB_BIN, startDevdb } from '../../server/database.js';
import { heapCapMb } from '../../server/heap.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'deviceid-life-'));
  dirs.push(d);
  return d;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pred();
}

/** Pids of devdb processes whose command line mentions `dir`. */
function devdbPidsFor(dir: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes('devdb') && l.includes(dir) && !/^\s*\d+\s+Z/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

function startServer(
  dataDir: string,
  env: Record<string, string> = {},
  entry = ['--import', 'tsx', 'server/main.ts'],
  command = process.execPath,
): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawn(command, entry, {
    env: { ...serverEnv(), PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no banner within 60 s: ${out} ${err}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, out: () => out });
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

/** The environment without what vitest adds (it sets BASE_URL=/ for Vite). */
function serverEnv(): NodeJS.ProcessEnv {
  const { BASE_URL: _b, MODE: _m, DEV: _d, PROD: _p, SSR: _s, ...rest } = process.env;
  return rest;
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe.skipIf(!existsSync(DEVDB_BIN) || !!process.env.MONGODB_URI)('process lifecycle on the FerretDB launcher', () => {
  it('the launcher prints its URI, serves, and exits on SIGTERM', async () => {
    const db = await startDevdb({ dataDir: tempDir(), devdb: { backend: 'sqlite', postgresqlUrl: undefined } });
    expect(db.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/\?directConnection=true$/);
    expect(alive(db.pid!)).toBe(true);
    await db.stop();
    expect(await waitFor(() => !alive(db.pid!), 5_000)).toBe(true);
  });

  it('npm start: prints the URL, answers health and readiness, stops on SIGTERM with no database left', async () => {
    const dir = tempDir();
    const { child, url } = await startServer(dir);
    expect(devdbPidsFor(dir)).toHaveLength(1);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
    expect(await waitFor(() => devdbPidsFor(dir).length === 0, 5_000)).toBe(true);
  });

  it('npm start runs the compiled server; the banner is a log line: JSON when stdout is not a terminal, readable with LOG_FORMAT=pretty', async () => {
    const built = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    // What `npm start` runs after its set-up step, as it runs it (sh; exec: the server is the shell's process).
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(start).toMatch(/^node scripts\/setup\.mjs && /);
    const asNpmStart = (env: Record<string, string>) => startServer(tempDir(), env, ['-c', start.replace(/^node scripts\/setup\.mjs && /, '')], 'sh');
    const banner = (out: string) => JSON.parse(out.split('\n').find((l) => l.includes('listening on'))!) as Record<string, unknown>;
    const json = await asNpmStart({});
    expect(banner(json.out())).toMatchObject({ level: 30, url: json.url, health: `${json.url}/healthz`, docs: `${json.url}/docs` });
    // The heap capped for the default visitor cache (server/heap.ts), V8's young generation on top.
    const capped = banner(json.out()).heapLimitMb as number;
    expect(capped).toBeGreaterThanOrEqual(heapCapMb(DEFAULT_VISITOR_CACHE_SIZE));
    expect(capped).toBeLessThan(heapCapMb(DEFAULT_VISITOR_CACHE_SIZE) + 100);
    json.child.kill('SIGTERM');
    expect(await exitOf(json.child)).toBe(0);
    // Sized from VISITOR_CACHE_SIZE; an operator's own cap wins.
    for (const [env, mb] of [
      [{ VISITOR_CACHE_SIZE: '500000' }, heapCapMb(500_000)],
      [{ NODE_OPTIONS: '--max-old-space-size=1500' }, 1500],
    ] as const) {
      const other = await asNpmStart(env);
      expect(banner(other.out()).heapLimitMb as number, JSON.stringify(env)).toBeGreaterThanOrEqual(mb);
      expect(banner(other.out()).heapLimitMb as number, JSON.stringify(env)).toBeLessThan(mb + 100);
      other.child.kill('SIGTERM');
      expect(await exitOf(other.child)).toBe(0);
    }

    const pretty = await startServer(tempDir(), { LOG_FORMAT: 'pretty' }, ['dist/server/main.js']);
    expect(pretty.out()).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: deviceid listening on http/m);
    expect((await fetch(`${pretty.url}/healthz`)).status).toBe(200);
    pretty.child.kill('SIGTERM');
    expect(await exitOf(pretty.child)).toBe(0);
  }, 120_000);

  it('the launcher exits by itself when the server is killed outright', async () => {
    const dir = tempDir();
    const { child } = await startServer(dir);
    expect(devdbPidsFor(dir)).toHaveLength(1);
    child.kill('SIGKILL');
    await exitOf(child);
    expect(await waitFor(() => devdbPidsFor(dir).length === 0, 5_000)).toBe(true);
  });
});

/** A JSON request over HTTPS to a server with a self-signed certificate. */
function httpsJson(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; cookie?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method, rejectUnauthorized: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] }),
      );
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe.skipIf(!existsSync(DEVDB_BIN) || !!process.env.MONGODB_URI)('HTTPS mode', () => {
  it('serves TLS itself and records cipher, version and a JA4 of the client hello on the event', async () => {
    const dir = tempDir();
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    const { child, url } = await startServer(dir, { TLS_CERT: join(dir, 'cert.pem'), TLS_KEY: join(dir, 'key.pem') });
    try {
      expect(url).toMatch(/^https:\/\//);
      const origin = new URL(url).origin.replace('127.0.0.1', 'localhost');
      const signup = await httpsJson(
        `${url}/api/auth/signup`,
        'POST',
        { email: 'tls@example.com', password: 'tls password 1' },
        { origin: 'https://localhost:0' },
      );
      // BASE_URL defaults to https://localhost:PORT with PORT=0, so Origin must match that.
      expect(signup.status).toBe(201);
      const cookie = signup.cookie!;
      const projects = await httpsJson(`${url}/api/projects`, 'GET', undefined, { cookie });
      const pid = projects.body.projects[0].id;
      const mk = (type: string) => httpsJson(`${url}/api/projects/${pid}/keys`, 'POST', { name: type, type }, { cookie, origin: 'https://localhost:0' });
      const live = (await mk('live')).body.key;
      const secret = (await mk('secret')).body.key;
      const { deviceValues, identifyBody } = await import('../support/signals.js');
      const id = await httpsJson(`${url}/v1/identify`, 'POST', identifyBody(deviceValues(77)), { 'x-api-key': live });
      expect(id.status).toBe(200);
      const event = await httpsJson(`${url}/v1/events/${id.body.requestId}`, 'GET', undefined, { authorization: `Bearer ${secret}` });
      expect(event.body.signals.server.tls).toEqual({
        cipher: expect.stringMatching(/^TLS_/),
        version: 'TLSv1.3',
        ja4: expect.stringMatching(/^t13[di]\d{4}/),
      });
      expect(origin).toBeTruthy();
    } finally {
      child.kill('SIGTERM');
      await exitOf(child);
    }
  });
});
