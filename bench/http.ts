// HTTP benchmark of the hot paths against a real server on a real database
// (the FerretDB launcher, or MONGODB_URI): identify with a rotating pool of
// devices, full-event reads and visit-history reads. Run:
//   node --import tsx bench/http.ts [--seconds 10] [--connections 10]
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { systemClock } from '../server/clock.js';
import { loadConfig } from '../server/config.js';
import { startDatabase } from '../server/database.js';
import { loadEdge } from '../server/edge/analyze.js';
import { createApp } from '../server/http/app.js';
import { Store } from '../server/store/index.js';
import { deviceValues, identifyBody } from '../test/support/signals.js';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '10' }, devices: { type: 'string', default: '500' } },
});
const seconds = Number(args.seconds);
const connections = Number(args.connections);
const devices = Number(args.devices);

const dir = mkdtempSync(join(tmpdir(), 'deviceid-bench-'));
const config = loadConfig({ DATA_DIR: dir, PLANS: '{"free":{"rps":1000000,"monthly":100000000}}', ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}) });
const db = await startDatabase(config);
const store = await Store.open({ uri: db.uri, dbName: `bench_${Date.now()}` });
const logger = pino({ level: 'silent' });
const edge = await loadEdge(config, logger);
const app = createApp({ config, store, clock: systemClock, logger, edge });
const server = app.listen(0);
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function api(path: string, body: object, cookie = ''): Promise<{ json: Record<string, unknown>; cookie: string }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', origin: config.baseUrl, cookie }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return { json: (await res.json()) as Record<string, unknown>, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie };
}

const signup = await api('/api/auth/signup', { email: 'bench@example.com', password: 'benchmark password' });
const projects = (await (await fetch(`${base}/api/projects`, { headers: { cookie: signup.cookie } })).json()) as { projects: { id: string }[] };
const pid = projects.projects[0]!.id;
const live = (await api(`/api/projects/${pid}/keys`, { name: 'bench', type: 'live' }, signup.cookie)).json.key as string;
const secret = (await api(`/api/projects/${pid}/keys`, { name: 'bench', type: 'secret' }, signup.cookie)).json.key as string;
const bodies = Array.from({ length: devices }, (_, i) => JSON.stringify(identifyBody(deviceValues(i + 1))));

function run(title: string, path: string, opts: Omit<autocannon.Options, 'url'> = {}): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ ...opts, url: base + path, connections, duration: seconds }, (err, result) => (err ? reject(err) : resolve(result)));
  }).then((r) => {
    const res = r as autocannon.Result;
    const non2xx = res.non2xx + res.errors + res.timeouts;
    console.log(
      `${title.padEnd(28)} ${res.requests.average.toFixed(0).padStart(6)} req/s   p50 ${res.latency.p50} ms   p99 ${res.latency.p99} ms   non-2xx/errors ${non2xx}`,
    );
    return res;
  });
}

let n = 0;
// First pass creates the visitors; the measured pass is mostly returning devices.
for (const b of bodies) await fetch(`${base}/v1/identify`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': live }, body: b });
await run('POST /v1/identify', '/v1/identify', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': live },
  requests: [{ setupRequest: (req) => ({ ...req, body: bodies[n++ % bodies.length]! }) }],
});

const one = (await (await fetch(`${base}/v1/identify`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': live }, body: bodies[0] })).json()) as { requestId: string; visitorId: string };
await run('GET /v1/events/:requestId', `/v1/events/${one.requestId}`, { headers: { authorization: `Bearer ${secret}` } });
await run('GET /v1/demo/visits/:id', `/v1/demo/visits/${one.visitorId}`, { headers: { 'x-api-key': secret } });
await run('GET /healthz', '/healthz');

console.log(`database: ${db.source}; ${connections} connections, ${seconds} s each, ${devices} devices`);
server.close();
edge.close();
await store.close();
await db.stop();
rmSync(dir, { recursive: true, force: true });
