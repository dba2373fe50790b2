// HTTP benchmark of identify against what the database and Node allow, in one
// run on the same database server: identify (returning devices, then first
// visits), an Express endpoint that parses the same body and does one
// insertOne (the floor an identify that stores an event cannot beat), and a
// bare node:http server answering constant JSON; then the reads, and
// identify's latency with a large number of stored visitors and events. With --proxied,
// identify of returning devices also through @deviceid/proxy (its Express
// middleware on loopback, each device presenting its device cookie) beside
// the direct figures, and the proxy's own cost in front of a server answering
// constant JSON. With --rules, the project has the 100 rules of
// bench/rules.ts and their lists in force (every identify is judged by them).
// Every measure also gives the CPU per request of this process (server and
// autocannon: the bare node:http line is autocannon's share, nearly) and of the
// database's processes (the launcher, and PostgreSQL's on its backend); after
// the first connection count, an accounting pass (200 requests one at a time)
// gives the documents and bytes each kind of request writes.
// With --metrics, the server records its Prometheus metrics (as with
// METRICS_PORT), and each identify measure says how many identifies the
// metrics counted against the requests autocannon sent. Run:
//
//   node --import tsx bench/http.ts [--backend sqlite,postgresql] [--connections 10,50]
//                                   [--seconds 10] [--devices 500] [--stored 1000,1000000] [--stored-events 10000,10000000] [--proxied] [--rules] [--metrics]
//
// --stored-events (one count per --stored step) adds copies of a real event
// with its search entries, each with its own requestId and visitor.
//
// The PostgreSQL backend needs a database (UTF8, C locale) at DEVDB_POSTGRESQL_URL
// (default postgres://postgres@127.0.0.1:5432/deviceid_bench).
import autocannon from 'autocannon';
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { ulid } from 'ulid';
import { createProxyMiddleware } from '../clients/proxy/index.js';
import { systemClock } from '../server/clock.js';
import { Metrics } from '../server/metrics/registry.js';
import { deviceValues, identifyBody } from '../test/support/signals.js';
import { seedEvents } from './support/events.js';
import { BENCH_LISTS, benchRules } from './support/rules.js';
import { startService, type BenchService } from './support/service.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10,50' },
    devices: { type: 'string', default: '500' },
    backend: { type: 'string', default: 'sqlite' },
    stored: { type: 'string', default: '' },
    'stored-events': { type: 'string', default: '' },
    proxied: { type: 'boolean', default: false },
    rules: { type: 'boolean', default: false },
    metrics: { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const connectionCounts = args.connections.split(',').map(Number);
const devices = Number(args.devices);
const storedCounts = args.stored ? args.stored.split(',').map(Number) : [];
const storedEvents = args['stored-events'] ? args['stored-events'].split(',').map(Number) : [];
if (storedEvents.length && storedEvents.length !== storedCounts.length) throw new Error('--stored-events needs one count per --stored step');

interface Measure {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  /** CPU milliseconds per completed request: this process (the server and autocannon), and the database's processes. */
  cpu: { node: number; database: number };
}

/** The database's CPU seconds so far (set per backend). */
let databaseCpu = () => 0;

function run(url: string, connections: number, opts: Omit<autocannon.Options, 'url'> = {}): Promise<Measure & { total: number; sent: number }> {
  const node0 = process.cpuUsage();
  const db0 = databaseCpu();
  return new Promise((resolve, reject) => {
    autocannon({ ...opts, url, connections, duration: seconds }, (err, r) => {
      if (err) return reject(err instanceof Error ? err : new Error(String(err)));
      const node = process.cpuUsage(node0);
      const per = (ms: number) => ms / Math.max(1, r.requests.total);
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        failed: r.non2xx + r.errors + r.timeouts,
        total: r.requests.total,
        sent: (r.requests as { sent?: number }).sent ?? r.requests.total,
        cpu: { node: per((node.user + node.system) / 1000), database: per((databaseCpu() - db0) * 1000) },
      });
    });
  });
}

/**
 * What requests write, one at a time and outside any timed measure: documents
 * and BSON bytes per request, by command and collection.
 */
async function accountWrites(service: BenchService, bodies: string[], url: string, headers: Record<string, string>): Promise<string> {
  service.accounting(true);
  // PostgreSQL's backends flush their counters at most once a second, and what is left after 10 s idle.
  const settle = () => (service.postgresCounters() ? new Promise((r) => setTimeout(r, 11_000)) : Promise.resolve());
  await settle();
  const pg0 = service.postgresCounters();
  for (const body of bodies) await fetch(url, { method: 'POST', headers, body });
  await settle();
  const pg1 = service.postgresCounters();
  const written = [...service.accounting(false)].filter(([, w]) => w.documents > 0).sort((a, b) => b[1].bytes - a[1].bytes);
  const n = bodies.length;
  const pg =
    pg0 && pg1
      ? `; PostgreSQL per request: ${Object.entries(pg1)
          .map(([k, v]) => `${k} ${((v - pg0[k as keyof typeof pg0]) / n).toFixed(1)}`)
          .join(', ')}`
      : '';
  const docs = written.reduce((t, [, w]) => t + w.documents, 0);
  const bytes = written.reduce((t, [, w]) => t + w.bytes, 0);
  return `${(docs / n).toFixed(1)} documents, ${(bytes / n / 1024).toFixed(1)} KiB written/request (${written
    .map(([k, w]) => `${k} ${(w.documents / n).toFixed(1)} docs ${(w.bytes / n / 1024).toFixed(1)} KiB`)
    .join(', ')})${pg}`;
}

/**
 * The server's database commands per identify during the last measure, the
 * commonest first. Each identify inserts exactly one document into events,
 * so that count is the divisor: the completed requests would also count the
 * commands of requests still in flight when the measure ended (at 50
 * connections, a third more).
 */
function perRequest(service: BenchService, completed: number): string {
  const all = service.commands();
  const requests = all.get('insert events') ?? completed;
  const counts = [...all].sort((a, b) => b[1] - a[1]);
  const total = counts.reduce((t, [, n]) => t + n, 0);
  return `${(total / requests).toFixed(1)} commands/request (${counts
    .slice(0, 6)
    .map(([k, n]) => `${k} ${(n / requests).toFixed(2)}`)
    .join(', ')})`;
}

const show = (title: string, m: Measure, extra = '') =>
  console.log(
    `  ${title.padEnd(42)} ${m.rps.toFixed(0).padStart(6)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms   failed ${m.failed}   CPU/req node ${m.cpu.node.toFixed(2)} ms, database ${Number.isNaN(m.cpu.database) ? 'n/a' : `${m.cpu.database.toFixed(2)} ms`}${extra}`,
  );

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The floor: Express parses the identify body and stores it with one insertOne on the same database. */
async function insertBaseline(service: BenchService): Promise<{ url: string; close(): void }> {
  const col = service.store.db.collection('benchInserts');
  const app = express();
  app.post('/insert', express.json({ limit: '64kb' }), (req, res, next) => {
    col.insertOne({ _id: ulid() as never, body: JSON.stringify(req.body), at: new Date() }).then(() => res.json({ ok: true }), next);
  });
  const server = createServer(app);
  return { url: `${await listen(server)}/insert`, close: () => server.close() };
}

/**
 * The floor of any design that records a visit and stores its event: the
 * same body parse, then a compare-and-swap on a small document (one of
 * `devices`, by `_id` and `rev`, as identify records a visit) and an
 * insertOne of the body: two commands, nothing else.
 */
async function twoCommands(service: BenchService, devices: number): Promise<{ url: string; close(): void }> {
  const docs = service.store.db.collection<{ _id: string; rev: number }>('benchCas');
  await docs.insertMany(Array.from({ length: devices }, (_, i) => ({ _id: `d${i}`, rev: 0 })));
  const revs = new Array<number>(devices).fill(0);
  const col = service.store.db.collection('benchInserts');
  let n = 0;
  const app = express();
  app.post('/two', express.json({ limit: '64kb' }), (req, res, next) => {
    const i = n++ % devices;
    const rev = revs[i]!;
    revs[i] = rev + 1;
    docs
      .updateOne({ _id: `d${i}`, rev }, { $set: { rev: rev + 1 } })
      .then(() => col.insertOne({ _id: ulid() as never, body: JSON.stringify(req.body), at: new Date() }))
      .then(() => res.json({ ok: true }), next);
  });
  const server = createServer(app);
  return { url: `${await listen(server)}/two`, close: () => server.close() };
}

/** The ceiling: node:http answering constant JSON. */
async function bare(): Promise<{ url: string; close(): void }> {
  const body = JSON.stringify({ ok: true });
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  return { url: `${await listen(server)}/`, close: () => server.close() };
}

/** @deviceid/proxy's Express middleware on loopback in front of `serviceUrl`, under /metrics. */
async function proxyInFront(serviceUrl: string, secret: string): Promise<{ url: string; close(): void }> {
  const app = express();
  app.use(createProxyMiddleware({ serviceUrl, secret, pathPrefix: '/metrics' }));
  const server = createServer(app);
  return { url: `${await listen(server)}/metrics`, close: () => server.close() };
}

/** Stores `n` visitors directly through the store (documents shaped like real ones, random ids). */
async function seedVisitors(service: BenchService, n: number): Promise<void> {
  const visitors = service.store.db.collection('visitors');
  const template = { accountId: 'acc_seeded', firstSeenAt: 1, lastSeenAt: 1, visitCount: 3, components: [], recent: [] };
  for (let done = 0; done < n;) {
    const batch = Math.min(5_000, n - done);
    await visitors.insertMany(
      Array.from({ length: batch }, () => ({ _id: `iq_${ulid()}` as never, ...template })),
      { ordered: false },
    );
    done += batch;
  }
}

/**
 * Stores `n` copies of the event `requestId` with its search entries (the
 * events collection's three `_id` families as identify writes them), each
 * copy with a new requestId (ULIDs in time order) and its own visitor.
 */
const json = { 'content-type': 'application/json' };

for (const backend of args.backend.split(',')) {
  const env: Record<string, string> =
    backend === 'postgresql'
      ? { DEVDB_BACKEND: 'postgresql', DEVDB_POSTGRESQL_URL: process.env.DEVDB_POSTGRESQL_URL ?? 'postgres://postgres@127.0.0.1:5432/deviceid_bench' }
      : {};
  const metrics = args.metrics ? new Metrics() : undefined;
  const service = await startService(systemClock, env, metrics);
  databaseCpu = () => service.databaseCpu();
  /** Identifies the metrics counted since the last call (after the requests still in flight have finished). */
  let counted = 0;
  const countedSince = async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    const all = (await metrics!.identifyDuration.get()).values.filter((v) => v.metricName === 'deviceid_identify_duration_seconds_count');
    const now = all.reduce((t, v) => t + v.value, 0);
    const since = now - counted;
    counted = now;
    return since;
  };
  const [floor, two, ceiling] = [await insertBaseline(service), await twoCommands(service, devices), await bare()];
  const { base, live, secret } = service;
  if (args.rules) await putBenchRules(base, secret);
  const returning = Array.from({ length: devices }, (_, i) => JSON.stringify(identifyBody(deviceValues(i + 1))));
  for (const b of returning) await fetch(`${base}/v1/identify`, { method: 'POST', headers: { ...json, 'x-api-key': live }, body: b });
  let firstSeed = 1_000_000;
  // Through the proxy: each returning device's first proxied visit sets its device cookie.
  const proxy = args.proxied ? await proxyInFront(base, service.proxySecret) : null;
  const stubProxy = args.proxied ? await proxyInFront(ceiling.url.replace(/\/$/, ''), service.proxySecret) : null;
  const cookies: string[] = [];
  if (proxy) {
    for (const b of returning) {
      const res = await fetch(`${proxy.url}/v1/identify`, { method: 'POST', headers: { ...json, 'x-api-key': live }, body: b });
      cookies.push(res.headers.getSetCookie()[0]!.split(';')[0]!);
    }
  }
  console.log(`\n${service.source}; ${seconds} s per measure; ${devices} returning devices${proxy ? '; direct and via @deviceid/proxy' : ''}`);

  // Warm-up, not reported: the first seconds of a measure pay for V8 compiling the server's hot code.
  let w = 0;
  await run(`${base}/v1/identify`, 10, {
    method: 'POST',
    headers: { ...json, 'x-api-key': live },
    requests: [{ setupRequest: (req) => ({ ...req, body: returning[w++ % returning.length]! }) }],
  });
  await run(floor.url, 10, { method: 'POST', headers: json, body: returning[0] });

  for (const connections of connectionCounts) {
    console.log(`${connections} connections:`);
    let n = 0;
    service.commands();
    if (metrics) await countedSince();
    const again = await run(`${base}/v1/identify`, connections, {
      method: 'POST',
      headers: { ...json, 'x-api-key': live },
      requests: [{ setupRequest: (req) => ({ ...req, body: returning[n++ % returning.length]! }) }],
    });
    const againCommands = perRequest(service, again.total);
    const againCounted = metrics ? await countedSince() : 0;
    const first = await run(`${base}/v1/identify`, connections, {
      method: 'POST',
      headers: { ...json, 'x-api-key': live },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(identifyBody(deviceValues(++firstSeed))) }) }],
    });
    const firstCommands = perRequest(service, first.total);
    const firstCounted = metrics ? await countedSince() : 0;
    let m = 0;
    const insert = await run(floor.url, connections, {
      method: 'POST',
      headers: json,
      requests: [{ setupRequest: (req) => ({ ...req, body: returning[m++ % returning.length]! }) }],
    });
    let k = 0;
    const pair = await run(two.url, connections, {
      method: 'POST',
      headers: json,
      requests: [{ setupRequest: (req) => ({ ...req, body: returning[k++ % returning.length]! }) }],
    });
    const node = await run(ceiling.url, connections);
    show('identify, returning devices', again, `   ${(again.rps / insert.rps).toFixed(2)}× insertOne`);
    show('identify, first visits', first, `   ${(first.rps / insert.rps).toFixed(2)}× insertOne`);
    console.log(`    returning: ${againCommands}\n    first visits: ${firstCommands}`);
    if (metrics) {
      console.log(
        `    metrics counted ${againCounted} returning identifies (autocannon sent ${again.sent}, completed ${again.total}), ${firstCounted} first visits (sent ${first.sent}, completed ${first.total})`,
      );
    }
    show('Express body parse + insertOne', insert);
    show('… + compare-and-swap updateOne first', pair, `   ${(pair.rps / insert.rps).toFixed(2)}× insertOne`);
    show('bare node:http', node);
    if (connections === connectionCounts[0]) {
      const headers = { ...json, 'x-api-key': live };
      console.log(`    writes, returning: ${await accountWrites(service, returning.slice(0, 200), `${base}/v1/identify`, headers)}`);
      const fresh = Array.from({ length: 200 }, () => JSON.stringify(identifyBody(deviceValues(++firstSeed))));
      console.log(`    writes, first visits: ${await accountWrites(service, fresh, `${base}/v1/identify`, headers)}`);
      console.log(`    writes, insertOne: ${await accountWrites(service, returning.slice(0, 200), floor.url, json)}`);
    }
    if (proxy) {
      // Direct again right before (the same conditions), then the same returning devices through
      // the proxy, each with the device cookie its first proxied visit set.
      let d = 0;
      const direct = await run(`${base}/v1/identify`, connections, {
        method: 'POST',
        headers: { ...json, 'x-api-key': live },
        requests: [{ setupRequest: (req) => ({ ...req, body: returning[d++ % returning.length]! }) }],
      });
      let p = 0;
      service.commands();
      const via = await run(`${proxy.url}/v1/identify`, connections, {
        method: 'POST',
        headers: { ...json, 'x-api-key': live },
        requests: [
          {
            setupRequest: (req) => {
              const i = p++ % returning.length;
              return { ...req, body: returning[i]!, headers: { ...req.headers, cookie: cookies[i]! } };
            },
          },
        ],
      });
      const viaCommands = perRequest(service, via.total);
      show('identify, returning, direct', direct);
      show('identify, returning, via @deviceid/proxy', via, `   p50 +${via.p50 - direct.p50} ms, p99 +${via.p99 - direct.p99} ms`);
      console.log(`    via the proxy: ${viaCommands}`);
      const stubDirect = await run(ceiling.url, connections, { method: 'POST', headers: { ...json, 'x-api-key': live }, body: returning[0] });
      const stubVia = await run(`${stubProxy!.url}/v1/identify`, connections, { method: 'POST', headers: { ...json, 'x-api-key': live }, body: returning[0] });
      show('constant JSON server, direct', stubDirect);
      show('constant JSON server, via the proxy', stubVia, `   p50 +${stubVia.p50 - stubDirect.p50} ms, p99 +${stubVia.p99 - stubDirect.p99} ms`);
    }
  }

  const one = (await (await fetch(`${base}/v1/identify`, { method: 'POST', headers: { ...json, 'x-api-key': live }, body: returning[0] })).json()) as {
    requestId: string;
    visitorId: string;
  };
  console.log('reads, 10 connections:');
  show('GET /v1/events/:requestId', await run(`${base}/v1/events/${one.requestId}`, 10, { headers: { authorization: `Bearer ${secret}` } }));
  show('GET /v1/demo/visits/:id', await run(`${base}/v1/demo/visits/${one.visitorId}`, 10, { headers: { 'x-api-key': secret } }));

  let stored = devices + firstSeed - 1_000_000;
  let storedEventCount = await service.store.db.collection('events').countDocuments({ _id: { $gte: 'req_', $lt: 'req_~' } } as never);
  for (const [step, target] of storedCounts.entries()) {
    if (target > stored) {
      const t0 = Date.now();
      await seedVisitors(service, target - stored);
      console.log(`seeded ${target - stored} visitors in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      stored = target;
    }
    const eventTarget = storedEvents[step] ?? 0;
    if (eventTarget > storedEventCount) {
      const t0 = Date.now();
      await seedEvents(service, one.requestId, eventTarget - storedEventCount);
      console.log(`seeded ${eventTarget - storedEventCount} events in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      storedEventCount = eventTarget;
    }
    let k = 0;
    const at = await run(`${base}/v1/identify`, 10, {
      method: 'POST',
      headers: { ...json, 'x-api-key': live },
      requests: [{ setupRequest: (req) => ({ ...req, body: returning[k++ % returning.length]! }) }],
    });
    show(`identify with ${target.toLocaleString('en')} stored visitors${storedEvents.length ? `, ${storedEventCount.toLocaleString('en')} events` : ''}`, at);
  }

  floor.close();
  two.close();
  ceiling.close();
  proxy?.close();
  stubProxy?.close();
  await service.close();
}

/** The rules benchmark's lists and 100 rules, in force for the project of `secret`. */
async function putBenchRules(base: string, secret: string): Promise<void> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { ...json, authorization: `Bearer ${secret}` }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  };
  for (const l of BENCH_LISTS) {
    await call('POST', '/v1/lists', { name: l.name, kind: l.kind });
    await call('POST', `/v1/lists/${l.name}/entries`, { add: l.values.map((v) => ({ value: String(v) })) });
  }
  await call('PUT', '/v1/ruleset', { rules: benchRules().map((r) => ({ ...r, name: r.id })) });
}
