// How big the documents identify writes are: average, median and largest
// BSON size per collection after a population of devices has visited (each
// device a few times, so visitors carry a visit page, networks and recent
// activity as in production). Issue 27's "smaller documents" is measured
// with this before and after. Run:
//
//   node --import tsx bench/doc-sizes.ts [--devices 200] [--visits 8]
import { parseArgs } from 'node:util';
import { BSON } from 'mongodb';
import { ManualClock } from '../server/clock.js';
import { deviceValues, identifyBody } from '../test/support/signals.js';
import { startService } from './support/service.js';

const { values: args } = parseArgs({ options: { devices: { type: 'string', default: '200' }, visits: { type: 'string', default: '8' } } });
const devices = Number(args.devices);
const visits = Number(args.visits);

const clock = new ManualClock(Date.UTC(2026, 10, 1));
const service = await startService(clock);
try {
  for (let v = 0; v < visits; v++) {
    for (let d = 0; d < devices; d++) {
      clock.advance(1_000);
      const res = await fetch(`${service.base}/v1/identify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': service.live },
        body: JSON.stringify(identifyBody(deviceValues(d + 1))),
      });
      if (res.status !== 200) throw new Error(`identify: ${res.status} ${await res.text()}`);
    }
    clock.advance(3_600_000);
  }
  const rows: string[][] = [];
  const report = (name: string, docs: object[]) => {
    const sizes = docs.map((d) => BSON.calculateObjectSize(d)).sort((a, b) => a - b);
    if (!sizes.length) return;
    const mean = Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length);
    rows.push([name, String(sizes.length), String(mean), String(sizes[sizes.length >> 1]), String(sizes[sizes.length - 1])]);
  };
  const all = (name: string) => service.store.db.collection<{ _id: string }>(name).find({}).toArray();
  report('visitors', await all('visitors'));
  // Events share their collection with their search entries (acc_…|…) and webhook outbox entries (~o|…).
  const events = await all('events');
  report(
    'events: the event',
    events.filter((d) => d._id.startsWith('req_')),
  );
  report(
    'events: search entries',
    events.filter((d) => !d._id.startsWith('req_') && !d._id.startsWith('~o|')),
  );
  report('visitPages', await all('visitPages'));
  report('fingerprints (identity index)', await all('fingerprints'));
  console.log(`${devices} devices × ${visits} visits (${service.source})`);
  console.log('| collection | documents | mean bytes | median | largest |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
} finally {
  await service.close();
}
