// What one identify costs the database, counted from the driver's commands,
// API key, project, account and quota included (they come from caches and
// quota leases in the steady state). Today's figures are the ceiling: a
// returning device 6 (token, visitor read for linking and again under the
// visit's lock, visitor update, the event with its search entries in one
// insertMany, visit page), a first visit about 36 (the identity index's point reads and
// read-modify-writes). The aim is 4 and 8.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from './support/dashboard.js';
import { createHarness, type Harness } from './support/harness.js';
import { deviceValues, identifyBody } from './support/signals.js';

let h: Harness;
let commands: string[] = [];
let live: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' }, (c) => commands.push(`${c.name} ${c.collection}`));
  live = await (await signUp(h)).key('live');
});
afterAll(async () => {
  await h.close();
});

async function identify(seed: number, token: string): Promise<string[]> {
  commands = [];
  const body = identifyBody({ ...deviceValues(seed), deviceToken: { token, storage: 'localStorage', createdAt: 1 } });
  const res = await h.http().post('/v1/identify').set('x-api-key', live).send(body);
  expect(res.status).toBe(200);
  return commands;
}

describe('database commands per identify', () => {
  it('a returning device costs at most 6 commands, a first visit at most 36 (steady state); the event is one insert', async () => {
    // Warm the process (key, project, account, quota lease) with other devices.
    for (let i = 0; i < 3; i++) await identify(90_000 + i, `warm_token_${i}_${'x'.repeat(16)}`);
    const first = await identify(1, `roundtrip_token_${'x'.repeat(16)}`);
    h.clock.advance(500);
    const again = await identify(1, `roundtrip_token_${'x'.repeat(16)}`);
    console.log(`first visit: ${first.length} commands (${first.join(', ')})\nreturning: ${again.length} commands (${again.join(', ')})`);
    expect(first.length).toBeLessThanOrEqual(36);
    expect(again.length).toBeLessThanOrEqual(6);
    // The event, its search entries (and an outbox entry when there are webhooks) are one command.
    for (const commands of [first, again]) expect(commands.filter((c) => c.endsWith(' events'))).toEqual(['insert events']);
  });
});
