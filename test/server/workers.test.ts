// WORKERS=2: the real process as a cluster on one port. The monthly quota
// holds exactly across the workers, a worker that dies is replaced, and
// SIGTERM stops everything with no database process left.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEVDB_BIN } from '../../server/database.js';
import { deviceValues, identifyBody } from '../support/signals.js';
import { freePort } from '../support/httpServer.js';

const dir = mkdtempSync(join(tmpdir(), 'deviceid-workers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Live processes whose parent is `parent` and whose command line matches `pattern`. */
const childrenOf = (parent: number, pattern: RegExp) =>
  execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, ppid, stat, ...args]) => Number(ppid) === parent && !stat?.startsWith('Z') && pattern.test(args.join(' ')))
    .map(([pid]) => Number(pid));

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end && !pred()) await new Promise((r) => setTimeout(r, 100));
  return pred();
}

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const { BASE_URL: _b, MODE: _m, DEV: _d, PROD: _p, SSR: _s, ...rest } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no banner within 90 s: ${out} ${err}`)), 90_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

describe.skipIf(!existsSync(DEVDB_BIN) || !!process.env.MONGODB_URI)('WORKERS=2', () => {
  it('shares one port, keeps the monthly quota exact across workers, replaces a dead worker, stops on SIGTERM', async () => {
    const port = await freePort();
    const { child, url } = await start({
      WORKERS: '2',
      PORT: String(port),
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      SIGNUP: 'open',
      PLANS: '{"free":{"rps":100000,"monthly":50}}',
    });
    const origin = `http://localhost:${port}`;
    const signup = await fetch(`${url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ email: 'workers@example.com', password: 'two workers, one quota' }),
    });
    expect(signup.status).toBe(201);
    const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
    const pid = ((await (await fetch(`${url}/api/projects`, { headers: { cookie } })).json()) as { projects: { id: string }[] }).projects[0]!.id;
    const key = (await (
      await fetch(`${url}/api/projects/${pid}/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, cookie },
        body: JSON.stringify({ name: 'live', type: 'live' }),
      })
    ).json()) as { key: string };

    const primary = child.pid!;
    const workers = childrenOf(primary, /server\/main\.ts/);
    expect(workers).toHaveLength(2);
    expect(childrenOf(primary, /devdb/)).toHaveLength(1);

    const statuses = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        fetch(`${url}/v1/identify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key.key, connection: 'close' },
          body: JSON.stringify(identifyBody(deviceValues(500 + i))),
        }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100);

    process.kill(workers[0]!, 'SIGKILL');
    expect(await waitFor(() => childrenOf(primary, /server\/main\.ts/).filter((p) => p !== workers[0]).length === 2, 15_000)).toBe(true);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const launcher = childrenOf(primary, /devdb/)[0]!;
    child.kill('SIGTERM');
    expect(await new Promise((r) => child.once('exit', r))).toBe(0);
    expect(
      await waitFor(
        () =>
          !execFileSync('ps', ['-eo', 'pid=,stat='])
            .toString()
            .split('\n')
            .some((l) => Number(l.trim().split(/\s+/)[0]) === launcher && !l.includes('Z')),
        5_000,
      ),
    ).toBe(true);
  }, 180_000);
});
