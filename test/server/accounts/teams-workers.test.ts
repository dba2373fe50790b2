// WORKERS=2: two processes serving one port on one database. Removing a
// member or lowering their role through one of them holds on the member's
// very next request, whichever process serves it: the auth middleware reads
// the membership from the database on every request.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { DEVDB_BIN } from '../../../server/database.js';
import { freePort } from '../../support/httpServer.js';

const dir = mkdtempSync(join(tmpdir(), 'deviceid-teams-workers-'));
let child: ChildProcess | undefined;
/** Everything the cluster wrote to stdout: JSON log lines, one per request, each with its process's pid. */
let out = '';
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const { BASE_URL: _b, MODE: _m, DEV: _d, PROD: _p, SSR: _s, ...rest } = process.env;
  const c = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no banner within 90 s: ${out} ${err}`)), 90_000);
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child: c, url: m[1]! });
      }
    });
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

interface Answer {
  status: number;
  body: any;
  cookie: string | undefined;
}

/**
 * One request on a new connection (no keep-alive): the cluster's primary
 * hands new connections to its workers in turn, so consecutive calls are
 * served by one process, then the other.
 */
function call(url: string, method: string, path: string, opts: { cookie?: string; origin?: string; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = httpRequest(
      `${url}${path}`,
      {
        method,
        agent: false,
        headers: {
          connection: 'close',
          ...(opts.cookie ? { cookie: opts.cookie } : {}),
          ...(opts.origin ? { origin: opts.origin } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          const set = res.headers['set-cookie']?.find((c) => c.startsWith('deviceid_session='));
          resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null, cookie: set?.split(';')[0] });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.skipIf(!existsSync(DEVDB_BIN) || !!process.env.MONGODB_URI)('teams with WORKERS=2', () => {
  it('a lowered role and a removal hold on the member’s next request in either process', async () => {
    const port = await freePort();
    const started = await start({ WORKERS: '2', PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'info', LOG_FORMAT: 'json', SIGNUP: 'open' });
    child = started.child;
    const { url } = started;
    const origin = `http://localhost:${port}`;

    const owner = await call(url, 'POST', '/api/auth/signup', { origin, body: { email: 'owner@workers.example', password: 'two workers, one team' } });
    expect(owner.status).toBe(201);
    const A = owner.body.account.id as string;
    const invited = await call(url, 'POST', `/api/accounts/${A}/invitations`, {
      origin,
      cookie: owner.cookie,
      body: { email: 'admin@workers.example', role: 'admin' },
    });
    expect(invited.status).toBe(201);
    const joined = await call(url, 'POST', '/api/auth/signup', {
      origin,
      body: { email: 'admin@workers.example', password: 'joins by invitation', invitation: new URL(invited.body.url).searchParams.get('invite') },
    });
    expect(joined.status).toBe(201);
    const admin = { cookie: joined.cookie, id: joined.body.user.id as string };

    /** The processes that logged answering `path` with `status` (the route's template, as the log writes it). */
    const servedBy = (path: string, status: number) =>
      new Set(
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { pid: number; path?: string; res?: { statusCode: number } })
          .filter((l) => l.path === path && l.res?.statusCode === status)
          .map((l) => l.pid),
      ).size;
    /** The member's next `n` requests: consecutive connections alternate between the two workers. */
    const next = async (path: string, n = 6) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) statuses.push((await call(url, 'GET', path, { cookie: admin.cookie })).status);
      // Log lines are written as answers complete: give the last one a moment to arrive.
      await new Promise((r) => setTimeout(r, 200));
      return statuses;
    };
    expect(await next(`/api/accounts/${A}/members`)).toEqual([200, 200, 200, 200, 200, 200]);

    const lowered = await call(url, 'PATCH', `/api/accounts/${A}/members/${admin.id}`, { origin, cookie: owner.cookie, body: { role: 'viewer' } });
    expect(lowered.status).toBe(200);
    // The very next request, then five more: both processes refuse what a viewer may not do, and allow what they may.
    expect(await next(`/api/accounts/${A}/members`)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(servedBy('/api/accounts/:accountId/members', 403)).toBe(2);
    expect(await next('/api/account/usage')).toEqual([200, 200, 200, 200, 200, 200]);

    const removed = await call(url, 'DELETE', `/api/accounts/${A}/members/${admin.id}`, { origin, cookie: owner.cookie });
    expect(removed.status).toBe(200);
    expect(await next('/api/account/usage')).toEqual([401, 401, 401, 401, 401, 401]);
    expect(servedBy('/api/account/usage', 401)).toBe(2);

    // Every entry written by either process is in the one log.
    const audit = await call(url, 'GET', `/api/accounts/${A}/audit`, { cookie: owner.cookie });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'member.remove',
      'member.role',
      'member.join',
      'member.invite',
      'account.create',
    ]);

    child.kill('SIGTERM');
    expect(await new Promise((r) => child!.once('exit', r))).toBe(0);
  }, 180_000);
});
