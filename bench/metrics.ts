// What the Prometheus metrics cost identify, and whether they count it: two
// servers on one database, one recording metrics as with METRICS_PORT (its
// database commands observed through the driver's command events) and one
// without, measured in turns (off, on, off, on, …), each with returning
// devices of its own (a device visiting both would find each server's cached
// revision stale after the other's write), so that the machine's drift falls
// on both. At the end, the
// metrics' identify count against the requests autocannon sent to that server.
//
//   node --import tsx bench/metrics.ts [--seconds 10] [--connections 10] [--rounds 3] [--devices 500] [--first-visits]
import autocannon from 'autocannon';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { systemClock } from '../server/clock.js';
import { Metrics } from '../server/metrics/registry.js';
import { deviceValues, identifyBody } from '../test/support/signals.js';
import { startService } from './support/service.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    devices: { type: 'string', default: '500' },
    'first-visits': { type: 'boolean', default: false },
  },
});
const [seconds, connections, rounds, devices] = [Number(args.seconds), Number(args.connections), Number(args.rounds), Number(args.devices)];
const json = { 'content-type': 'application/json' };

const metrics = new Metrics();
const service = await startService(systemClock, {}, metrics);
const withMetrics = service.base;
const without = await service.another();
const devicesOf = (from: number) => Array.from({ length: devices }, (_, i) => JSON.stringify(identifyBody(deviceValues(from + i))));
const returning = new Map([
  [without, devicesOf(1)],
  [withMetrics, devicesOf(1 + devices)],
]);
for (const [base, bodies] of returning) {
  for (const b of bodies) await fetch(`${base}/v1/identify`, { method: 'POST', headers: { ...json, 'x-api-key': service.live }, body: b });
}
let seed = 2_000_000;

/**
 * CPU seconds used so far by this process (both servers and autocannon) and
 * by its descendants (the database): per request, far steadier than
 * throughput on a machine whose speed moves.
 */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
function cpu(): { node: number; database: number } {
  const { user, system } = process.cpuUsage();
  const children = (pid: number): number[] => {
    // ps exits 1 when the process has no children.
    const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.trim();
    const direct = out ? out.split(/\s+/).map(Number) : [];
    return direct.flatMap((c) => [c, ...children(c)]);
  };
  let database = 0;
  for (const pid of children(process.pid)) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      database += (Number(fields[11]) + Number(fields[12])) / TICKS;
    } catch {
      // gone meanwhile (ps itself)
    }
  }
  return { node: (user + system) / 1e6, database };
}

async function measure(base: string): Promise<{ rps: number; p50: number; p99: number; sent: number; failed: number; nodeMs: number; databaseMs: number }> {
  const before = cpu();
  const m = await load(base);
  const after = cpu();
  return { ...m, nodeMs: ((after.node - before.node) / m.sent) * 1000, databaseMs: ((after.database - before.database) / m.sent) * 1000 };
}

function load(base: string): Promise<{ rps: number; p50: number; p99: number; sent: number; failed: number }> {
  let n = 0;
  const own = returning.get(base)!;
  const body = () => (args['first-visits'] ? JSON.stringify(identifyBody(deviceValues(++seed))) : own[n++ % own.length]!);
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `${base}/v1/identify`,
        connections,
        duration: seconds,
        method: 'POST',
        headers: { ...json, 'x-api-key': service.live },
        requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
      },
      (err, r) =>
        err
          ? reject(err instanceof Error ? err : new Error(String(err)))
          : resolve({
              rps: r.requests.average,
              p50: r.latency.p50,
              p99: r.latency.p99,
              sent: (r.requests as { sent?: number }).sent ?? r.requests.total,
              failed: r.non2xx + r.errors + r.timeouts,
            }),
    ),
  );
}

const identified = async () => (await metrics.identifyDuration.get()).values.filter((v) => v.metricName?.endsWith('_count')).reduce((t, v) => t + v.value, 0);

console.log(`${service.source}; ${args['first-visits'] ? 'first visits' : `${devices} returning devices`}; ${connections} connections; ${seconds} s a measure`);
// Warm-up of both, not reported (V8 compiling the hot code).
await measure(without);
await measure(withMetrics);
// The warm-up's requests still in flight when it stopped are counted when they finish (or are abandoned).
await new Promise((r) => setTimeout(r, 1_000));
const before = await identified();
let sentWith = 0;
const results = { off: [] as number[], on: [] as number[], offCpu: [] as number[], onCpu: [] as number[], offDb: [] as number[], onDb: [] as number[] };
for (let round = 1; round <= rounds; round++) {
  const off = await measure(without);
  const on = await measure(withMetrics);
  sentWith += on.sent;
  results.off.push(off.rps);
  results.on.push(on.rps);
  results.offCpu.push(off.nodeMs);
  results.onCpu.push(on.nodeMs);
  results.offDb.push(off.databaseMs);
  results.onDb.push(on.databaseMs);
  console.log(
    `  round ${round}: without ${off.rps.toFixed(1)} req/s (p50 ${off.p50} ms, CPU ${off.nodeMs.toFixed(2)} + ${off.databaseMs.toFixed(2)} ms)   with ${on.rps.toFixed(1)} req/s (p50 ${on.p50} ms, CPU ${on.nodeMs.toFixed(2)} + ${on.databaseMs.toFixed(2)} ms)   ${((on.rps / off.rps - 1) * 100).toFixed(1)} %   failed ${off.failed + on.failed}`,
  );
}
// Requests still in flight when a measure stopped finish (or are abandoned) within a moment.
await new Promise((r) => setTimeout(r, 1_000));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `  mean: without ${mean(results.off).toFixed(1)} req/s, with ${mean(results.on).toFixed(1)} req/s: ${((mean(results.on) / mean(results.off) - 1) * 100).toFixed(1)} %`,
);
const [offCpu, onCpu] = [mean(results.offCpu) + mean(results.offDb), mean(results.onCpu) + mean(results.onDb)];
console.log(
  `  CPU per identify (this process, autocannon included, + the database): without ${mean(results.offCpu).toFixed(2)} + ${mean(results.offDb).toFixed(2)} ms, with ${mean(results.onCpu).toFixed(2)} + ${mean(results.onDb).toFixed(2)} ms: ${((onCpu / offCpu - 1) * 100).toFixed(1)} % (on saturated cores throughput follows CPU per request)`,
);
console.log(`  the metrics counted ${(await identified()) - before} identifies; autocannon sent ${sentWith} to that server`);
await service.close();
process.exit(0);
