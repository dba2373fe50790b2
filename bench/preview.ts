// How much of a project's recent history a rule preview examines within its
// budget (server/decisions/rules.ts, PREVIEW_BUDGET_MS), on the real
// database: one real event, copied --events times with its search entries,
// then previews of a draft expression over up to 10,000 of them; first, how
// fast the database reads the account's search entries and the events (the
// preview's two reads).
//
//   node --import tsx bench/preview.ts [--events 10000] [--rounds 3]
import { parseArgs } from 'node:util';
import { systemClock } from '../server/clock.js';
import { deviceValues, identifyBody } from '../test/support/signals.js';
import { seedEvents } from './support/events.js';
import { startService } from './support/service.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' } } });
const json = { 'content-type': 'application/json' };

const service = await startService(systemClock, {});
try {
  const { base, live, secret } = service;
  const res = await fetch(`${base}/v1/identify`, {
    method: 'POST',
    headers: { ...json, 'x-api-key': live },
    body: JSON.stringify(identifyBody(deviceValues(1))),
  });
  const { requestId } = (await res.json()) as { requestId: string };
  let started = performance.now();
  await seedEvents(service, requestId, Number(args.events) - 1);
  console.log(`seeded ${args.events} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (let round = 1; round <= Number(args.rounds); round++) {
    started = performance.now();
    const preview = await fetch(`${base}/v1/ruleset/preview`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${secret}` },
      body: JSON.stringify({ expression: "suspectScore > 50 || ipLocation.country == 'DE'", events: Number(args.events) }),
    });
    const body = (await preview.json()) as { examined: number; matched: number; tookMs: number };
    console.log(
      `round ${round}: ${preview.status}, examined ${body.examined}, matched ${body.matched}, tookMs ${body.tookMs}, answered in ${Math.round(performance.now() - started)} ms`,
    );
  }
} finally {
  await service.close();
}
