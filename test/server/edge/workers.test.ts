// The IP data with WORKERS=2: by default (EDGE_DATA=shared) only the
// cluster's primary loads the geolocation and ASN data and the workers ask
// it over IPC; EDGE_DATA=per-worker loads it in each worker. Either way the
// identify answer (IP, location, ASN and the verdicts they drive) is the one
// a single process gives for the same request. A real cluster on the test
// database, behind a trusted proxy (X-Forwarded-For), beside a single-process
// app on a real port asked with the same client.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOADED_MESSAGE } from '../../../server/edge/ipData.js';
import { createHarness, TEST_ENV, testDbName, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
import { freePort, listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const dir = mkdtempSync(join(tmpdir(), 'deviceid-edge-workers-'));
const lists = join(dir, 'lists');
const TRUST_PROXY = '127.0.0.1/32,::1';

interface Cluster {
  child: ChildProcess;
  url: string;
  /** Log lines written so far, parsed. */
  lines: () => { pid: number; msg: string; path?: string }[];
  stop: () => Promise<void>;
}

/** `npm run dev` with WORKERS=2 on the test database, logging JSON at info. */
async function startCluster(edgeData: 'shared' | 'per-worker'): Promise<Cluster> {
  const { BASE_URL: _b, MODE: _m, DEV: _d, PROD: _p, SSR: _s, ...rest } = process.env;
  const port = await freePort();
  const env = {
    ...rest,
    ...TEST_ENV,
    WORKERS: '2',
    EDGE_DATA: edgeData,
    PORT: String(port),
    DATA_DIR: join(dir, edgeData),
    LISTS_DIR: lists,
    TRUST_PROXY,
    MONGODB_URI: inject('mongoUri'),
    MONGODB_DB: testDbName(`edge-workers-${edgeData}.test.ts`),
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    PLANS: '{"free":{"rps":100000,"monthly":1000000}}',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { pid: number; msg: string; path?: string });
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (!/listening on /.test(out)) return;
      clearInterval(timer);
      resolve({ child, url: `http://127.0.0.1:${port}`, lines, stop });
    }, 100);
    setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`no banner within 90 s: ${out} ${err}`));
    }, 90_000).unref();
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}: ${err}`));
    });
  });
}

/** Sign-up, a live key and a secret key through the dashboard API over HTTP. */
async function keysOf(url: string): Promise<{ live: string; secret: string }> {
  const origin = url.replace('127.0.0.1', 'localhost');
  const json = { 'content-type': 'application/json', origin };
  const signup = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email: `edge-workers-${Date.now()}@example.com`, password: 'one copy of the IP data' }),
  });
  expect(signup.status).toBe(201);
  const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
  const pid = ((await (await fetch(`${url}/api/projects`, { headers: { cookie } })).json()) as { projects: { id: string }[] }).projects[0]!.id;
  const key = async (type: string) =>
    (
      (await (
        await fetch(`${url}/api/projects/${pid}/keys`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ name: type, type }) })
      ).json()) as { key: string }
    ).key;
  return { live: await key('live'), secret: await key('secret') };
}

/** What the edge decides about a request: the answer's IP, location and verdicts, and the event's server signals. */
async function edgeView(url: string, keys: { live: string; secret: string }, ip: string, seed: number) {
  const res = await fetch(`${url}/v1/identify`, {
    method: 'POST',
    // A connection each, so that the cluster spreads them over its workers.
    headers: { 'content-type': 'application/json', 'x-api-key': keys.live, 'x-forwarded-for': ip, connection: 'close' },
    body: JSON.stringify(identifyBody(deviceValues(seed))),
  });
  expect(res.status).toBe(200);
  const r = (await res.json()) as Record<string, unknown>;
  const event = (await (await fetch(`${url}/v1/events/${String(r.requestId)}`, { headers: { authorization: `Bearer ${keys.secret}` } })).json()) as {
    signals: { server: Record<string, unknown> };
  };
  return {
    ip: r.ip,
    ipLocation: r.ipLocation,
    verdicts: r.verdicts,
    riskFactors: r.riskFactors,
    botProbability: r.botProbability,
    suspectScore: r.suspectScore,
    server: event.signals.server,
  };
}

// Public v4 and v6 (Google, Cloudflare, a UK ISP), IPv4-mapped, private, and addresses on the lists.
const ADDRESSES = [
  '8.8.8.8',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '1.1.1.1',
  '81.2.69.142',
  '10.1.2.3',
  '185.220.100.240',
  '89.187.160.10',
  '45.155.205.9',
];

let single: Harness;
let singleHttp: Listening;
let singleKeys: { live: string; secret: string };
beforeAll(async () => {
  mkdirSync(lists, { recursive: true });
  writeFileSync(join(lists, 'tor-exits.txt'), '185.220.100.240\n');
  writeFileSync(join(lists, 'blocklist.netset'), '45.155.205.0/24\n');
  writeFileSync(join(lists, 'vpn-ranges.txt'), '89.187.160.0/24\n');
  single = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', LISTS_DIR: lists, TRUST_PROXY });
  singleHttp = await listenApp(single.app);
  const c = await signUp(single);
  singleKeys = { live: await c.key('live'), secret: await c.key('secret') };
});
afterAll(async () => {
  await singleHttp?.close();
  await single?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('WORKERS=2, IP data', () => {
  it('EDGE_DATA=shared (default): only the primary loads the data; workers answer as one process does', async () => {
    const cluster = await startCluster('shared');
    try {
      const keys = await keysOf(cluster.url);
      // Twice per address, so that the second goes through a worker's cache of recent answers.
      for (const [round, seedBase] of [
        [1, 70_000],
        [2, 71_000],
      ] as const) {
        for (const [i, ip] of ADDRESSES.entries()) {
          const seed = seedBase + i;
          const [fromCluster, fromOne] = await Promise.all([edgeView(cluster.url, keys, ip, seed), edgeView(singleHttp.url, singleKeys, ip, seed)]);
          expect({ round, address: ip, ...fromCluster }).toEqual({ round, address: ip, ...fromOne });
        }
      }

      const primary = cluster.child.pid!;
      // Whoever loads the data says so (ipData.ts): the primary only. (Comparing the processes'
      // RSS said less: the worker that served the sign-up also runs the password check's thread.)
      const loaded = cluster.lines().filter((l) => l.msg === LOADED_MESSAGE);
      expect(loaded.map((l) => l.pid)).toEqual([primary]);
      const asking = cluster.lines().filter((l) => l.msg === 'IP geolocation and ASN lookups go to the cluster primary');
      const workers = [...new Set(asking.map((l) => l.pid))];
      expect(workers).toHaveLength(2);
      expect(workers).not.toContain(primary);
      // Both workers answered identify requests (a connection each, handed out in turn).
      const served = new Set(
        cluster
          .lines()
          .filter((l) => l.path === '/v1/identify')
          .map((l) => l.pid),
      );
      expect([...served].sort()).toEqual([...workers].sort());
    } finally {
      await cluster.stop();
    }
  }, 180_000);

  it('EDGE_DATA=per-worker: each worker loads its own copy and the primary none', async () => {
    const cluster = await startCluster('per-worker');
    try {
      const keys = await keysOf(cluster.url);
      for (const [i, ip] of ['8.8.8.8', '2001:4860:4860::8888', '185.220.100.240'].entries()) {
        const [fromCluster, fromOne] = await Promise.all([edgeView(cluster.url, keys, ip, 72_000 + i), edgeView(singleHttp.url, singleKeys, ip, 72_000 + i)]);
        expect({ address: ip, ...fromCluster }).toEqual({ address: ip, ...fromOne });
      }
      // Worker 0 prints the banner while the other may still be loading its copy: wait for both.
      const loaded = () =>
        cluster
          .lines()
          .filter((l) => l.msg === LOADED_MESSAGE)
          .map((l) => l.pid);
      for (const deadline = Date.now() + 60_000; new Set(loaded()).size < 2 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
      expect(new Set(loaded()).size).toBe(2);
      expect(loaded()).not.toContain(cluster.child.pid);
      expect(cluster.lines().some((l) => l.msg === 'IP geolocation and ASN lookups go to the cluster primary')).toBe(false);
    } finally {
      await cluster.stop();
    }
  }, 180_000);
});
