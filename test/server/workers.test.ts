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

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
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
        resolve({ child, url: m[1]!, output: () => out });
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

describe.skipIf(!existsSync(DEVDB_BIN) || !!process.env.MONGODB_URI)('WORKERS=2', () => {
  it('shares one port, keeps the monthly quota exact across workers, one scrape sums them, replaces a dead worker, stops on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const { child, url } = await start({
      WORKERS: '2',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
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

    // The primary's scrape: both workers' counts, summed (each served some of the 150: connection: close spreads them).
    const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const value = (line: string) =>
      Number(
        scrape
          .split('\n')
          .find((l) => l.startsWith(`${line} `))
          ?.split(' ')[1],
      );
    expect(value('deviceid_identify_duration_seconds_count{outcome="first_visit"}')).toBe(50);
    expect(value('deviceid_identify_duration_seconds_count{outcome="refused"}')).toBe(100);
    expect(value('deviceid_refusals_total{reason="monthly_quota"}')).toBe(100);
    expect(value('deviceid_metrics_workers_answered')).toBe(2);
    expect(value('deviceid_database_launcher_up')).toBe(1);
    expect(value('deviceid_database_launcher_restarts_total')).toBe(0);

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
  it('a ruleset or list changed through one worker is in force on the next identify in every worker', async () => {
    const port = await freePort();
    // Caches that would hold a project for a minute: only the relay can make the change visible at once.
    const { child, url } = await start({
      WORKERS: '2',
      PORT: String(port),
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      SIGNUP: 'open',
      CACHE_TTL_MS: '60000',
      PLANS: '{"free":{"rps":100000,"monthly":100000}}',
    });
    try {
      const origin = `http://localhost:${port}`;
      const signup = await fetch(`${url}/api/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email: 'rules@example.com', password: 'two workers, one ruleset' }),
      });
      const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
      const pid = ((await (await fetch(`${url}/api/projects`, { headers: { cookie } })).json()) as { projects: { id: string }[] }).projects[0]!.id;
      const keyOf = async (type: string) =>
        (
          (await (
            await fetch(`${url}/api/projects/${pid}/keys`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', origin, cookie },
              body: JSON.stringify({ name: type, type }),
            })
          ).json()) as { key: string }
        ).key;
      const [live, secret] = [await keyOf('live'), await keyOf('secret')];
      const v1 = (method: string, path: string, body?: unknown) =>
        fetch(`${url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, connection: 'close' },
          body: JSON.stringify(body),
        });
      /** 20 identifies on fresh connections (spread over both workers), and the decision each event records. */
      const decisions = async () => {
        const ids = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const r = await fetch(`${url}/v1/identify`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': live, connection: 'close' },
              body: JSON.stringify(identifyBody(deviceValues(700 + i))),
            });
            const body = (await r.json()) as { requestId: string };
            if (r.status !== 200) throw new Error(`identify ${r.status} ${JSON.stringify(body)}`);
            return body.requestId;
          }),
        );
        return Promise.all(
          ids.map(async (id) => ((await (await v1('GET', `/v1/events/${id}`)).json()) as { decision: { action: string; rulesetVersion: number } }).decision),
        );
      };
      expect((await v1('POST', '/v1/lists', { name: 'local', kind: 'ip' })).status).toBe(201);
      const rules = [{ id: 'local', name: 'Local', expression: "inList('local', ip)", action: 'block' }];
      expect((await v1('PUT', '/v1/ruleset', { rules })).status).toBe(200);
      // Both workers now hold version 1 and the empty list.
      expect(new Set((await decisions()).map((d) => `${d.action}@${d.rulesetVersion}`))).toEqual(new Set(['allow@1']));
      expect((await v1('POST', '/v1/lists/local/entries', { add: [{ value: '127.0.0.1' }, { value: '::1' }] })).status).toBe(200);
      expect(new Set((await decisions()).map((d) => `${d.action}@${d.rulesetVersion}`))).toEqual(new Set(['block@1']));
      expect((await v1('PUT', '/v1/ruleset', { rules: [], defaultAction: 'review' })).status).toBe(200);
      expect(new Set((await decisions()).map((d) => `${d.action}@${d.rulesetVersion}`))).toEqual(new Set(['review@2']));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }, 180_000);
});
