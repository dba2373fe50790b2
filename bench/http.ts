// HTTP benchmark of the hot paths against a real server on a real database
// (the FerretDB launcher, or MONGODB_URI): identify with a rotating pool of
// devices, full-event reads and visit-history reads. Run:
//   node --import tsx bench/http.ts [--seconds 10] [--connections 10]
import autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { systemClock } from '../server/clock.js';
import { deviceValues, identifyBody } from '../test/support/signals.js';
import { startService } from './support/service.js';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '10' }, devices: { type: 'string', default: '500' } },
});
const seconds = Number(args.seconds);
const connections = Number(args.connections);
const devices = Number(args.devices);

const service = await startService(systemClock);
const { base, live, secret } = service;
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

console.log(`database: ${service.source}; ${connections} connections, ${seconds} s each, ${devices} devices`);
await service.close();
