// RateLimitError from the real identify endpoint's metering (spec 8), through deviceid/client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentifyClient, RateLimitError, type IdentifyRequest } from '../../../clients/node/index.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let srv: Listening;
beforeAll(async () => {
  // Free plan: 2 identify calls a second and 3 a month.
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":2,"monthly":3}}' });
  srv = await listenApp(h.app);
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

let seed = 9100;
const body = () => identifyBody(deviceValues(++seed)) as unknown as IdentifyRequest;
const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('RateLimitError from the real service', () => {
  it('monthly quota: usage, limit and retryAfter from the 429, thrown at once (Retry-After is days away)', async () => {
    const c = await signUp(h);
    const client = createIdentifyClient({ baseUrl: srv.url, apiKey: await c.key('live') });
    for (let i = 0; i < 3; i++) {
      h.clock.advance(1000);
      await client.identify(body());
    }
    h.clock.advance(1000);
    const started = Date.now();
    const err = await caught(client.identify(body()));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err).toBeInstanceOf(RateLimitError);
    const e = err as RateLimitError;
    expect(e).toMatchObject({ status: 429, code: 'rate_limited', usage: 3, limit: 3, attempts: 1, serverMessage: 'Monthly API call limit exceeded' });
    // The harness clock stands at 2026-01-15 12:00:0x UTC: the quota resets on 2026-02-01.
    const untilFebruary = Math.ceil((Date.UTC(2026, 1, 1) - h.clock.now()) / 1000);
    expect(e.retryAfter).toBeGreaterThanOrEqual(untilFebruary - 1);
    expect(e.retryAfter).toBeLessThanOrEqual(untilFebruary + 1);
  });

  it('per-second limit: retries after Retry-After and succeeds once the second has passed', async () => {
    const c = await signUp(h);
    const client = createIdentifyClient({ baseUrl: srv.url, apiKey: await c.key('test'), backoff: { baseDelayMs: 10, maxDelayMs: 50 } });
    h.clock.advance(1000);
    await client.identify(body());
    await client.identify(body());
    // The third call in this (manual) second gets 429 + Retry-After: 1; the server's second moves on while the client waits.
    const tick = setTimeout(() => h.clock.advance(1000), 300);
    const started = Date.now();
    const result = await client.identify(body());
    clearTimeout(tick);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(result.visitCount).toBe(1);
  });

  it('per-second limit: RateLimitError with usage, limit, retryAfter 1 once the retries are used up', async () => {
    const c = await signUp(h);
    const client = createIdentifyClient({ baseUrl: srv.url, apiKey: await c.key('test'), retries: 1, backoff: { baseDelayMs: 10, maxDelayMs: 50 } });
    h.clock.advance(1000);
    await client.identify(body());
    await client.identify(body());
    const err = await caught(client.identify(body()));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, usage: 4, limit: 2, retryAfter: 1, attempts: 2, serverMessage: 'Rate limit exceeded' });
  });
});
