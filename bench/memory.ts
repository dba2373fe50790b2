// What the server's memory is made of, and its resident size under load:
//
// 1. in this process, RSS and the heap/Buffer split after each step of
//    start-up: the server's modules, then the edge data (IP geolocation,
//    ASN table, IP lists: loadEdge);
// 2. the compiled server (`npm start`'s dist/server/main.js) as its own
//    process tree with WORKERS=1 and WORKERS=2, on a database started here,
//    under identify load (autocannon, returning devices), sampling the RSS of
//    every process of the tree.
//
//   node --import tsx bench/memory.ts [--seconds 15] [--connections 10] [--devices 300]
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { identifyBody, deviceValues } from '../test/support/signals.js';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '15' }, connections: { type: 'string', default: '10' }, devices: { type: 'string', default: '300' } },
});
const MB = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;

// 1. Attribution in this process.
const usage = () => {
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, buffers: m.arrayBuffers };
};
const steps: [string, ReturnType<typeof usage>][] = [['node + tsx', usage()]];
const { loadConfig } = await import('../server/config.js');
const { loadEdge } = await import('../server/edge/analyze.js');
await import('../server/http/app.js');
steps.push(['+ server modules', usage()]);
const dir = mkdtempSync(join(tmpdir(), 'deviceid-memory-'));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' });
const edge = await loadEdge(config, pino({ level: 'silent' }));
steps.push(['+ edge data (loadEdge)', usage()]);
edge.close();
console.log('start-up, in one process (RSS, JS heap used, Buffers):');
for (const [name, u] of steps) console.log(`  ${name.padEnd(26)} RSS ${MB(u.rss).padStart(7)}   heap ${MB(u.heap).padStart(6)}   Buffers ${MB(u.buffers).padStart(6)}`);

// 2. The compiled server under load.
const { startDatabase } = await import('../server/database.js');
const db = await startDatabase(config);
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** RSS of a process and all its descendants, from /proc. */
function treeRss(root: number): { total: number; processes: number; each: string } {
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
  let total = 0;
  const each: string[] = [];
  for (const pid of tree) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      total += rss;
      each.push(`${/Name:\s+(\S+)/.exec(status)?.[1]} ${MB(rss)}`);
    } catch {
      // gone meanwhile
    }
  }
  return { total, processes: tree.length, each: each.join(', ') };
}

const json = { 'content-type': 'application/json' };
for (const workers of [1, 2]) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'deviceid-memory-server-'));
  const child = spawn(process.execPath, ['dist/server/main.js'], {
    env: { ...process.env, MONGODB_URI: db.uri, MONGODB_DB: `memory_${workers}_${Date.now()}`, PORT: String(port), BASE_URL: base, DATA_DIR: dataDir, WORKERS: String(workers), LOG_LEVEL: 'warn', PLANS: '{"free":{"rps":1000000,"monthly":100000000}}' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error('the server did not start');
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const idle = treeRss(child.pid!);
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
  const sampler = setInterval(() => {
    const now = treeRss(child.pid!);
    if (now.total > peak.total) peak = now;
  }, 250);
  let n = 0;
  const result = await autocannon({
    url: `${base}/v1/identify`,
    method: 'POST',
    connections: Number(args.connections),
    duration: Number(args.seconds),
    headers: { ...json, 'x-api-key': live },
    requests: [{ setupRequest: (req) => ({ ...req, body: bodies[n++ % bodies.length]! }) }],
  });
  clearInterval(sampler);
  const after = treeRss(child.pid!);
  console.log(
    `compiled server, WORKERS=${workers} (${idle.processes} processes): idle ${MB(idle.total)}, peak under load ${MB(peak.total)}, after ${MB(after.total)}; ` +
      `${result.requests.average.toFixed(0)} identify/s, ${result.non2xx + result.errors} failed\n    at peak: ${peak.each}`,
  );
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
await db.stop();
rmSync(dir, { recursive: true, force: true });
