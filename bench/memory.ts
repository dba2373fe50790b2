// What the server's memory is made of, and its resident size under load:
//
// 1. in this process, RSS and the heap/Buffer split after each step of
//    start-up: the server's modules, then the IP geolocation and ASN data
//    (localIpData), then the IP lists (LISTS_DIR if set, else none:
//    Cloudflare's ranges only), i.e. what loadEdge loads;
// 2. the compiled server (`npm start`'s dist/server/main.js) as its own
//    process tree with WORKERS=1, WORKERS=2 EDGE_DATA=per-worker and
//    WORKERS=2 EDGE_DATA=shared, on a database started here, under identify
//    load (autocannon, returning devices) from public client addresses
//    (X-Forwarded-For behind TRUST_PROXY; --ips distinct ones, each device
//    keeping its own, or 0 for a new address every request), sampling the
//    RSS of every process of the tree.
//
//   node --import tsx bench/memory.ts [--seconds 15] [--connections 10] [--devices 300] [--ips 300] [--only 1|2-per-worker|2-shared ...]
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { normalizeIp } from '../server/edge/address.js';
import { isPrivateOrReserved } from '../server/edge/ip.js';
import { heapFlagsFromEnv } from '../server/heap.js';
import { freePort } from '../test/support/httpServer.js';
import { identifyBody, deviceValues } from '../test/support/signals.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '10' },
    devices: { type: 'string', default: '300' },
    ips: { type: 'string', default: '300' },
    only: { type: 'string', multiple: true },
  },
});
const fail = (message: string): never => {
  throw new Error(message);
};
const MB = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;

// 1. Attribution in this process.
const usage = () => {
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, buffers: m.arrayBuffers };
};
const steps: [string, ReturnType<typeof usage>][] = [['node + tsx', usage()]];
const { loadConfig } = await import('../server/config.js');
const { localIpData } = await import('../server/edge/ipData.js');
const { loadLists } = await import('../server/edge/lists.js');
await import('../server/http/app.js');
steps.push(['+ server modules', usage()]);
const dir = mkdtempSync(join(tmpdir(), 'deviceid-memory-'));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', LISTS_DIR: process.env.LISTS_DIR ?? join(dir, 'no-lists') });
await localIpData(pino({ level: 'silent' }));
steps.push(['+ geolocation and ASN', usage()]);
const lists = await loadLists({ dir: config.listsDir });
const ranges = Object.values(lists.status()).reduce((n, s) => n + (s ? s.ranges.v4 + s.ranges.v6 : 0), 0);
steps.push([`+ IP lists (${ranges} ranges)`, usage()]);
lists.close();
console.log('start-up, in one process (RSS, JS heap used, Buffers):');
for (const [name, u] of steps)
  console.log(`  ${name.padEnd(30)} RSS ${MB(u.rss).padStart(7)}   heap ${MB(u.heap).padStart(6)}   Buffers ${MB(u.buffers).padStart(6)}`);

// 2. The compiled server under load.
const { startDatabase } = await import('../server/database.js');
const db = await startDatabase(config);
interface Proc {
  pid: number;
  /** 'server' alone, else the cluster's 'primary' and its 'worker's. */
  role: string;
  rss: number;
}

/** RSS of a process and all its descendants, from /proc. */
function treeRss(root: number, clustered: boolean): { total: number; procs: Proc[] } {
  const parents = new Map<number, number>();
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parents.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  const procs: Proc[] = [];
  for (const pid of tree) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      const name = /Name:\s+(\S+)/.exec(status)?.[1] ?? '?';
      procs.push({ pid, role: pid === root ? (clustered ? 'primary' : 'server') : name === 'node' ? 'worker' : name, rss });
    } catch {
      // gone meanwhile
    }
  }
  return { total: procs.reduce((n, p) => n + p.rss, 0), procs };
}
const show = (procs: Proc[]) => procs.map((p) => `${p.role} ${MB(p.rss)}`).join(', ');

/** Public IPv4 addresses, seeded. */
function publicAddresses(n: number, seed = 1): string[] {
  let x = seed;
  const out: string[] = [];
  while (out.length < n) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const a = `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
    if (!isPrivateOrReserved(normalizeIp(a)!)) out.push(a);
  }
  return out;
}

const json = { 'content-type': 'application/json' };
const ALL_RUNS = [
  { name: '1', workers: 1, edgeData: 'shared' },
  { name: '2-per-worker', workers: 2, edgeData: 'per-worker' },
  { name: '2-shared', workers: 2, edgeData: 'shared' },
];
// --only picks runs in its order (repeat them to alternate: each run's database is new, but the server under it grows).
const RUNS = args.only ? args.only.map((name) => ALL_RUNS.find((r) => r.name === name) ?? fail(`--only: no run ${name}`)) : ALL_RUNS;
const ipCount = Number(args.ips);
const addresses = publicAddresses(ipCount > 0 ? ipCount : 200_000, 7);
console.log(
  `\nidentify load: ${args.connections} connections, ${args.seconds} s, ${args.devices} returning devices, ` +
    (ipCount > 0 ? `${ipCount} public client addresses (each device keeps its own)` : 'a new public client address every request'),
);
for (const run of RUNS) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'deviceid-memory-server-'));
  const env = {
    ...process.env,
    MONGODB_URI: db.uri,
    MONGODB_DB: `memory_${run.name.replace(/-/g, '_')}_${Date.now()}`,
    PORT: String(port),
    BASE_URL: base,
    DATA_DIR: dataDir,
    WORKERS: String(run.workers),
    EDGE_DATA: run.edgeData,
    TRUST_PROXY: '127.0.0.1/32,::1',
    LOG_LEVEL: 'warn',
    PLANS: '{"free":{"rps":1000000,"monthly":100000000}}',
  };
  // With the heap cap `npm start` gives it (scripts/heap-flags.mjs), unless NODE_OPTIONS sets one.
  const child = spawn(process.execPath, [...heapFlagsFromEnv(env), 'dist/server/main.js'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error('the server did not start');
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const clustered = run.workers > 1;
  const idle = treeRss(child.pid!, clustered);
  const post = async (path: string, body: object, cookie = '') => {
    const res = await fetch(base + path, { method: 'POST', headers: { ...json, origin: base, cookie }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return { json: (await res.json()) as Record<string, unknown>, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie };
  };
  const signup = await post('/api/auth/signup', { email: 'memory@example.com', password: 'benchmark password, twice over' });
  const projects = (await (await fetch(`${base}/api/projects`, { headers: { cookie: signup.cookie } })).json()) as { projects: { id: string }[] };
  const live = (await post(`/api/projects/${projects.projects[0]!.id}/keys`, { name: 'memory', type: 'live' }, signup.cookie)).json.key as string;
  const bodies = Array.from({ length: Number(args.devices) }, (_, i) => JSON.stringify(identifyBody(deviceValues(i + 1))));
  let peak = idle;
  const peakOf = new Map<number, Proc>();
  const sampler = setInterval(() => {
    const now = treeRss(child.pid!, clustered);
    if (now.total > peak.total) peak = now;
    for (const p of now.procs) if (p.rss > (peakOf.get(p.pid)?.rss ?? 0)) peakOf.set(p.pid, p);
  }, 250);
  let n = 0;
  const result = await autocannon({
    url: `${base}/v1/identify`,
    method: 'POST',
    connections: Number(args.connections),
    duration: Number(args.seconds),
    headers: { ...json, 'x-api-key': live },
    requests: [
      {
        setupRequest: (req) => {
          const i = n++;
          const device = i % bodies.length;
          const ip = ipCount > 0 ? addresses[device % addresses.length]! : addresses[i % addresses.length]!;
          return { ...req, body: bodies[device]!, headers: { ...req.headers, 'x-forwarded-for': ip } };
        },
      },
    ],
  });
  clearInterval(sampler);
  const after = treeRss(child.pid!, clustered);
  console.log(
    `compiled server, WORKERS=${run.workers}${clustered ? ` EDGE_DATA=${run.edgeData}` : ''} (${idle.procs.length} processes): ` +
      `total idle ${MB(idle.total)}, peak under load ${MB(peak.total)}, after ${MB(after.total)}; ` +
      `${result.requests.average.toFixed(0)} identify/s, p99 ${result.latency.p99} ms, ${result.non2xx + result.errors} failed\n` +
      `    idle: ${show(idle.procs)}\n    peak per process: ${show([...peakOf.values()])}`,
  );
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
await db.stop();
rmSync(dir, { recursive: true, force: true });
