// Event retention (RETENTION_DAYS): the sweep deletes events older than the
// retention period and their visits, keeps newer ones, the linkedId search
// and the visit history stay consistent, and visitors keep their counts.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION_DAYS, loadConfig } from '../../server/config.js';
import { defaultSweeps, runSweeps } from '../../server/maintenance.js';
import { requestIdBound, RETENTION_INTERVAL_MS, retentionSweep } from '../../server/retention.js';
import { VISITS_PER_PAGE } from '../../server/store/visits.js';
import { signUp, type Customer } from '../support/dashboard.js';
import { createHarness, TEST_ENV, type Harness } from '../support/harness.js';
import { deviceValues, identifyBody } from '../support/signals.js';

const DAY = 24 * 3600_000;

describe('RETENTION_DAYS', () => {
  it(`defaults to ${DEFAULT_RETENTION_DAYS} days and takes 1 to 36500`, () => {
    expect(loadConfig(TEST_ENV).retentionDays).toBe(90);
    expect(loadConfig({ ...TEST_ENV, RETENTION_DAYS: '30' }).retentionDays).toBe(30);
    expect(() => loadConfig({ ...TEST_ENV, RETENTION_DAYS: '0' })).toThrow(/^Invalid RETENTION_DAYS: /);
  });
});

describe('requestIdBound', () => {
  it('sorts above every requestId of an earlier time and below those of that time and later', () => {
    const t = Date.UTC(2026, 0, 15, 12);
    const bound = requestIdBound(t);
    expect(bound).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{10}$/);
    expect(`${requestIdBound(t - 1)}ZZZZZZZZZZZZZZZZ` < bound).toBe(true);
    expect(`${requestIdBound(t)}0000000000000000` > bound).toBe(true);
  });
});

describe('the retention sweep', () => {
  let h: Harness;
  let c: Customer;
  let live: string;
  let secret: string;
  const t0 = Date.UTC(2026, 0, 1);

  beforeAll(async () => {
    h = await createHarness(import.meta.filename, { RETENTION_DAYS: '30' });
    c = await signUp(h);
    live = await c.key('live');
    secret = await c.key('secret');
  });
  afterAll(async () => {
    await h.close();
  });

  const identify = async (seed: number, at: number, linkedId?: string) => {
    h.clock.set(at);
    const res = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', live)
      .send(identifyBody(deviceValues(seed), linkedId ? { linkedId } : {}));
    expect(res.status).toBe(200);
    return res.body as { requestId: string; visitorId: string };
  };
  const get = (path: string) => h.http().get(path).set('authorization', `Bearer ${secret}`).set('x-api-key', secret);

  it('deletes old events and visits, keeps new ones, and keeps search, history and visit counts consistent', async () => {
    // One device: 25 visits a day apart (pages 0 and 1 of its history), then 3 more 40 days later.
    const old: string[] = [];
    let visitorId = '';
    for (let i = 0; i < VISITS_PER_PAGE + 5; i++) {
      const r = await identify(7, t0 + i * DAY, i % 2 ? 'order-1' : undefined);
      old.push(r.requestId);
      visitorId = r.visitorId;
    }
    const recent: string[] = [];
    for (let i = 0; i < 3; i++) recent.push((await identify(7, t0 + (65 + i) * DAY, 'order-1')).requestId);
    const otherDevice = await identify(8, t0 + 10 * DAY);

    // Now: day 70, so the 30-day cutoff is day 40; visits of days 0-24 and device 8's go.
    h.clock.set(t0 + 70 * DAY);
    const deleted = await retentionSweep(h.store, h.config.retentionDays, 4)(new Date(h.clock.now()));
    expect(deleted).toBe(old.length + 1);

    for (const id of [...old, otherDevice.requestId]) expect((await get(`/v1/events/${id}`)).status, id).toBe(404);
    for (const id of recent) expect((await get(`/v1/events/${id}`)).status, id).toBe(200);
    const search = await get('/v1/events?linkedId=order-1&limit=100');
    expect(search.body.events.map((e: { requestId: string }) => e.requestId)).toEqual([...recent].reverse());

    const history = await get(`/v1/demo/visits/${visitorId}`);
    expect(history.status).toBe(200);
    expect(history.body.totalVisits).toBe(old.length + recent.length);
    expect(history.body.visits.map((v: { timestamp: number }) => v.timestamp)).toEqual([67, 66, 65].map((d) => t0 + d * DAY));
    // Paging by time still finds the kept visits before a moment, and nothing before the kept ones.
    const before = await get(`/v1/demo/visits/${visitorId}?before=${t0 + 67 * DAY}`);
    expect(before.body.visits.map((v: { timestamp: number }) => v.timestamp)).toEqual([66, 65].map((d) => t0 + d * DAY));
    const older = await get(`/v1/demo/visits/${visitorId}?before=${t0 + 30 * DAY}`);
    expect(older.body.visits).toEqual([]);
    // The first page held only deleted visits: it is gone; the second, which the visitor holds, keeps its 3 recent ones.
    const pages = await h.store.db
      .collection('visitPages')
      .find({ _id: { $in: [`${visitorId}:0`, `${visitorId}:1`] } as never })
      .toArray();
    expect(pages).toEqual([]);
    expect((await h.store.visitors.get(visitorId))?.visits?.map((v) => v.timestamp)).toEqual([65, 66, 67].map((d) => t0 + d * DAY));

    // Only what is left is stored, and only it is in the search index.
    expect(await h.store.db.collection('events').countDocuments({ _id: { $gte: 'req_', $lt: 'req_~' } } as never)).toBe(recent.length);
    const indexed = await h.store.db
      .collection('events')
      .find({ _id: { $lt: 'req_' } } as never)
      .toArray();
    expect(indexed.length).toBeGreaterThan(0);
    expect(new Set(indexed.map((e) => e.r))).toEqual(new Set(recent));
  });

  it('does its work at most hourly, and again once the hour has passed', async () => {
    const sweep = retentionSweep(h.store, h.config.retentionDays);
    await identify(9, t0 + 100 * DAY);
    h.clock.set(t0 + 200 * DAY);
    const now = h.clock.now();
    expect(await sweep(new Date(now))).toBeGreaterThan(0);
    await identify(9, t0 + 100 * DAY);
    expect(await sweep(new Date(now + RETENTION_INTERVAL_MS - 1))).toBe(0);
    expect(await sweep(new Date(now + RETENTION_INTERVAL_MS))).toBe(1);
  });

  it('is one of the periodic sweeps, with RETENTION_DAYS', async () => {
    const kept = await identify(10, t0 + 300 * DAY - 29 * DAY);
    const gone = await identify(11, t0 + 300 * DAY - 31 * DAY);
    h.clock.set(t0 + 300 * DAY);
    await runSweeps(defaultSweeps(h.store, h.config.retentionDays), h.clock, pino({ level: 'silent' }));
    expect((await get(`/v1/events/${kept.requestId}`)).status).toBe(200);
    expect((await get(`/v1/events/${gone.requestId}`)).status).toBe(404);
  });
});
