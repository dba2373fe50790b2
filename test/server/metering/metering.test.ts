// Plans and metering (spec 8) and the domain allowlist (spec 5.4), through identify; the plans' list.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
beforeAll(async () => {
  // Small limits so the edges are reachable: free 10/s and 3 a month, builder 50 a month.
  // Plans switched by the accounts themselves (PLAN_SELF_SERVICE) keep these tests about metering.
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"monthly":3},"builder":{"monthly":50,"rps":1000}}', PLAN_SELF_SERVICE: 'true' });
});
afterAll(async () => {
  await h.close();
});

let seed = 5000;
const body = (extra: Record<string, unknown> = {}) => identifyBody(deviceValues(++seed), extra);
const identify = (key: string, b: object = body()) => request(h.app).post('/v1/identify').set('x-api-key', key).send(b);

describe('GET /api/plans', () => {
  it('answers every plan with the limits this instance applies (PLANS over the defaults), to any signed-in user', async () => {
    const c = await signUp(h);
    const res = await c.agent.get('/api/plans');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      plans: [
        { name: 'free', rps: 10, monthly: 3 },
        { name: 'builder', rps: 1_000, monthly: 50 },
        { name: 'growth', rps: 1_000, monthly: 250_000 },
        { name: 'scale', rps: 1_000, monthly: 2_000_000 },
      ],
    });
    // The account's own limits are its plan's row.
    const account = (await c.agent.get('/api/account')).body.account;
    expect(res.body.plans.find((p: { name: string }) => p.name === account.plan)).toEqual({ name: account.plan, ...account.limits });
    const anonymous = await request(h.app).get('/api/plans');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('not_signed_in');
  });
});

describe('per-second limit', () => {
  it('answers the 11th call in one second on the free plan with 429, usage, limit and Retry-After', async () => {
    const c = await signUp(h);
    const test = await c.key('test');
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await identify(test);
      statuses.push(res.status);
      // A test key's answers tell the per-second limit.
      expect([res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-reset']]).toEqual(['10', '1']);
      remaining.push(String(res.headers['x-ratelimit-remaining']));
    }
    expect(statuses).toEqual(Array(10).fill(200));
    expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
    const over = await identify(test);
    expect([over.headers['x-ratelimit-limit'], over.headers['x-ratelimit-remaining']]).toEqual(['10', '0']);
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: 'Rate limit exceeded', usage: 11, limit: 10, code: expect.any(String) });
    expect(over.headers['retry-after']).toBe('1');
    h.clock.advance(1000);
    expect((await identify(test)).status).toBe(200);
  });

  it('counts all keys of the account together, and accounts separately', async () => {
    const a = await signUp(h);
    const b = await signUp(h);
    const [a1, a2, b1] = [await a.key('test'), await a.key('test'), await b.key('test')];
    h.clock.advance(1000);
    for (let i = 0; i < 5; i++) {
      expect((await identify(a1)).status).toBe(200);
      expect((await identify(a2)).status).toBe(200);
    }
    expect((await identify(a1)).status).toBe(429);
    expect((await identify(b1)).status).toBe(200);
  });
});

describe('monthly quota', () => {
  it('answers over-quota live calls with 429 and the exact usage and limit; test keys never count', async () => {
    const c = await signUp(h);
    const live = await c.key('live');
    const test = await c.key('test');
    h.clock.advance(1000);
    for (let i = 0; i < 3; i++) {
      const res = await identify(live);
      expect(res.status).toBe(200);
      // A live key's answers tell the monthly quota: its limit, what is left (at most), seconds to the next month.
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(Number(res.headers['x-ratelimit-remaining'])).toBeLessThanOrEqual(2 - i);
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    }
    for (let i = 0; i < 3; i++) expect((await identify(test)).status).toBe(200);
    h.clock.advance(1000);
    const over = await identify(live);
    expect([over.headers['x-ratelimit-limit'], over.headers['x-ratelimit-remaining']]).toEqual(['3', '0']);
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: 'Monthly API call limit exceeded', usage: 3, limit: 3, code: expect.any(String) });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await identify(test)).status).toBe(200);
    const account = await c.agent.get('/api/account');
    expect(account.body.account.usage).toEqual({ period: '2026-01', count: 3 });
  });

  it('does not count failed calls (bad body, domain refused)', async () => {
    const c = await signUp(h);
    const live = await c.key('live');
    h.clock.advance(1000);
    expect((await identify(live, { signals: {} })).status).toBe(400);
    await c.agent
      .patch(`/api/projects/${c.projectId}`)
      .set('origin', c.origin)
      .send({ allowedDomains: ['shop.example.com'] });
    expect((await identify(live, body({ url: 'https://evil.example/' }))).status).toBe(403);
    expect((await c.agent.get('/api/account')).body.account.usage.count).toBe(0);
  });

  it('resets with the calendar month (UTC) and keeps counts in the database', async () => {
    const c = await signUp(h);
    const live = await c.key('live');
    h.clock.set(Date.UTC(2026, 2, 31, 23, 59, 58));
    for (let i = 0; i < 3; i++) expect((await identify(live)).status).toBe(200);
    expect((await identify(live)).status).toBe(429);
    h.clock.set(Date.UTC(2026, 3, 1, 0, 0, 1));
    expect((await identify(live)).status).toBe(200);
    await h.app.drain();
    const usage = async (period: string) => (await h.store.usage.month(c.accountId, period)).count;
    expect([await usage('2026-03'), await usage('2026-04')]).toEqual([3, 1]);
  });

  it('lets exactly the allowed number of 200 concurrent calls through at the quota edge', async () => {
    const c = await signUp(h);
    await c.agent.put('/api/account/plan').set('origin', c.origin).send({ plan: 'builder' });
    const live = await c.key('live');
    h.clock.advance(1000);
    const results = await Promise.all(Array.from({ length: 200 }, () => identify(live)));
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toBe(50);
    expect(limited).toHaveLength(150);
    expect(limited.every((r) => r.body.error === 'Monthly API call limit exceeded' && r.body.usage === 50 && r.body.limit === 50)).toBe(true);
    expect((await c.agent.get('/api/account')).body.account.usage.count).toBe(50);
  });
});

describe('domain allowlist', () => {
  it('accepts allowed hosts and subdomains, refuses others with 403, and checks Origin too', async () => {
    const c = await signUp(h);
    await c.agent.put('/api/account/plan').set('origin', c.origin).send({ plan: 'builder' });
    await c.agent
      .patch(`/api/projects/${c.projectId}`)
      .set('origin', c.origin)
      .send({ allowedDomains: ['shop.example.com', '*.example.org'] });
    const live = await c.key('live');
    const test = await c.key('test');
    h.clock.advance(1000);
    const cases: [string, string, string | undefined, number][] = [
      [live, 'https://shop.example.com/cart', undefined, 200],
      [live, 'https://a.b.example.org/', 'https://a.b.example.org', 200],
      [live, 'https://example.org/', undefined, 403],
      [live, 'https://evil.example/', undefined, 403],
      [live, 'https://shop.example.com.evil.example/', undefined, 403],
      [live, 'https://shop.example.com/', 'https://evil.example', 403],
      [live, 'not a url', undefined, 403],
      [live, 'http://localhost:3000/', undefined, 403],
      [test, 'http://localhost:3000/', 'http://localhost:3000', 200],
      [test, 'http://127.0.0.1/', undefined, 200],
    ];
    for (const [key, url, origin, status] of cases) {
      let req = request(h.app).post('/v1/identify').set('x-api-key', key);
      if (origin) req = req.set('origin', origin);
      const res = await req.send(body({ url }));
      expect([url, origin, res.status]).toEqual([url, origin, status]);
      if (status === 403) expect(res.body).toEqual({ error: 'Domain not allowed', code: expect.any(String) });
    }
    const missingUrl = await identify(live, { ...body(), url: undefined });
    expect(missingUrl.status).toBe(403);
  });
});
