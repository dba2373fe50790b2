// GET /api/account/usage: the dashboard's per-day usage, counted by identify
// in this process's usage slot (metering/leases.ts).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLAN_SELF_SERVICE: 'true' });
});
afterAll(async () => {
  await h.close();
});

let seed = 9000;
const identify = (key: string) =>
  request(h.app)
    .post('/v1/identify')
    .set('x-api-key', key)
    .send(identifyBody(deviceValues(++seed)));
const zeroDays = (period: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ date: `${period}-${String(i + 1).padStart(2, '0')}`, count: 0, test: 0 }));

describe('usage per day', () => {
  it('counts successful live calls per UTC day up to today; test keys and other accounts never show', async () => {
    // Sessions last 30 days on the same clock: move it before signing up.
    h.clock.set(Date.UTC(2026, 2, 9, 23, 59, 0));
    const c = await signUp(h);
    const other = await signUp(h);
    const live = await c.key('live');
    const test = await c.key('test');
    for (let i = 0; i < 2; i++) expect((await identify(live)).status).toBe(200);
    expect((await identify(test)).status).toBe(200);
    h.clock.set(Date.UTC(2026, 2, 10, 0, 0, 1));
    for (let i = 0; i < 3; i++) expect((await identify(live)).status).toBe(200);

    const res = await c.agent.get('/api/account/usage');
    expect(res.status).toBe(200);
    const days = zeroDays('2026-03', 10);
    days[8]!.count = 2;
    days[9]!.count = 3;
    // The test key's call is shown apart and never counted against the quota.
    days[8]!.test = 1;
    expect(res.body).toEqual({ period: '2026-03', limit: 10_000, count: 5, testCount: 1, days });
    // Written to this process's slot, not once per call.
    const slot = await h.store.db.collection('usage').findOne({ _id: `${c.accountId}:2026-03:s0` as never });
    expect(slot).toMatchObject({ period: '2026-03', count: 5, days: { '09': 2, '10': 3 }, testCount: 1, testDays: { '09': 1 } });
    expect((await c.agent.get('/api/account')).body.account.usage).toEqual({ period: '2026-03', count: 5 });

    const theirs = await other.agent.get('/api/account/usage');
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual({ period: '2026-03', limit: 10_000, count: 0, testCount: 0, days: zeroDays('2026-03', 10) });
  });

  it('answers a past month with all its days and the current plan’s limit; a new month starts empty', async () => {
    h.clock.set(Date.UTC(2026, 1, 28, 12, 0, 0));
    const c = await signUp(h);
    const live = await c.key('live');
    expect((await identify(live)).status).toBe(200);
    h.clock.set(Date.UTC(2026, 2, 1, 8, 0, 0));
    await c.agent.put('/api/account/plan').set('origin', c.origin).send({ plan: 'growth' });

    const feb = await c.agent.get('/api/account/usage?period=2026-02');
    expect(feb.status).toBe(200);
    const days = zeroDays('2026-02', 28);
    days[27]!.count = 1;
    expect(feb.body).toEqual({ period: '2026-02', limit: 250_000, count: 1, testCount: 0, days });

    const now = await c.agent.get('/api/account/usage');
    expect(now.body).toEqual({ period: '2026-03', limit: 250_000, count: 0, testCount: 0, days: zeroDays('2026-03', 1) });
    // Before the account existed: nothing counted, every day listed.
    expect((await c.agent.get('/api/account/usage?period=2024-02')).body.days).toEqual(zeroDays('2024-02', 29));
  });

  it('needs a session: 401', async () => {
    const res = await h.http().get('/api/account/usage');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Not signed in', code: expect.any(String) });
  });

  it.each([['2026-13'], ['2026-1'], ['March'], ['2026-03-01'], ['']])('refuses the period %j with 400', async (period) => {
    const c = await signUp(h);
    const res = await c.agent.get(`/api/account/usage?period=${encodeURIComponent(period)}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'period: must be a month, YYYY-MM', code: expect.any(String) });
  });

  it('refuses a month that has not started with 400', async () => {
    h.clock.set(Date.UTC(2026, 5, 30, 23, 0, 0));
    const c = await signUp(h);
    const res = await c.agent.get('/api/account/usage?period=2026-07');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'period: must not be after the current month', code: expect.any(String) });
    expect((await c.agent.get('/api/account/usage?period=2026-06')).body.days).toHaveLength(30);
  });
});
