// What one identify costs the database, counted from the driver's commands,
// API key, project, account and quota included (they come from caches and
// quota leases in the steady state). A returning device: 4 (its token, its
// visitor, the visitor's compare-and-swap update that also records the visit,
// the event with its search entries). A first visit: at most 8 (token; every
// index key in one read; candidate visitors in one read; the new visitor and
// its token claim, two unique inserts; the visit; the index in one bulk
// write; the event).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from './support/dashboard.js';
import { createHarness, type Harness } from './support/harness.js';
import { deviceValues, identifyBody } from './support/signals.js';

let h: Harness;
let commands: string[] = [];
let quotaWork = 0;
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
  // Quota leases and usage flushes land on whichever call needs them: counted apart, amortised below.
  quotaWork += commands.filter((c) => c.endsWith(' usage')).length;
  return commands.filter((c) => !c.endsWith(' usage'));
}

describe('database commands per identify', () => {
  it('a returning device costs 4 commands, a first visit at most 8 (steady state); the event is one insert', async () => {
    // Warm the process (key, project, account, quota lease) with other devices.
    for (let i = 0; i < 3; i++) await identify(90_000 + i, `warm_token_${i}_${'x'.repeat(16)}`);
    const first = await identify(1, `roundtrip_token_${'x'.repeat(16)}`);
    h.clock.advance(500);
    const again = await identify(1, `roundtrip_token_${'x'.repeat(16)}`);
    // The same device with its storage cleared: a new token, and a candidate visitor to read and score.
    h.clock.advance(500);
    const cleared = await identify(1, `cleared_token_${'x'.repeat(16)}`);
    console.log(
      `first visit: ${first.length} commands (${first.join(', ')})\nreturning: ${again.length} commands (${again.join(', ')})\ncleared storage: ${cleared.length} commands (${cleared.join(', ')})`,
    );
    expect(again).toEqual(['find fingerprints', 'find visitors', 'update visitors', 'insert events']);
    expect(first.length).toBeLessThanOrEqual(8);
    expect(cleared.length).toBeLessThanOrEqual(8);
    expect(cleared).toContain('find visitors');
    // The event, its search entries (and an outbox entry when there are webhooks) are one command.
    for (const commands of [first, again, cleared]) expect(commands.filter((c) => c.endsWith(' events'))).toEqual(['insert events']);
  });

  it('the quota costs well under one command per call', async () => {
    quotaWork = 0;
    for (let i = 0; i < 50; i++) {
      h.clock.advance(100);
      await identify(2, `quota_token_${'x'.repeat(16)}`);
    }
    console.log(`quota work: ${quotaWork} commands over 50 calls`);
    expect(quotaWork).toBeLessThanOrEqual(10);
  });
});
