// Limits and usage across processes: several Meter or Leases instances on one
// database stand for several processes leasing from the same chains and
// counting in their own usage slots.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../server/clock.js';
import { DEFAULT_PLANS } from '../../../server/config.js';
import { ApiError } from '../../../server/errors.js';
import { Leases } from '../../../server/metering/leases.js';
import { Meter } from '../../../server/metering/meter.js';
import { periodOf } from '../../../server/metering/period.js';
import type { ApiKeyDoc } from '../../../server/store/apiKeys.js';
import { createHarness, type Harness } from '../../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

let n = 0;
const account = () => `acc_quota_${++n}`;
const clock = () => new ManualClock(Date.UTC(2026, 4, 4, 12, 0, 0));
const monthly = (c: ManualClock) => new Leases(h.store.usage, c, periodOf);
const perSecond = (c: ManualClock) => new Leases(h.store.rate, c, (ms) => `s${Math.floor(ms / 1000)}`);

/** A process's meter with a plan of `monthly` calls (the account has no document: the free plan). */
const meter = (c: ManualClock, limit: number) => new Meter(h.store, { ...DEFAULT_PLANS, free: { rps: 100_000, monthly: limit } }, c);
const key = (accountId: string, type: 'live' | 'test' = 'live') => ({ accountId, type }) as ApiKeyDoc;
const admit = (m: Meter, k: ApiKeyDoc) =>
  m.admit(k).then(
    (r) => ({ ok: true as const, release: r.release }),
    (err: ApiError) => ({ ok: false as const, status: err.status }),
  );

describe('monthly quota', () => {
  it('admits exactly the limit to 200 concurrent calls spread over two processes, and counts each', async () => {
    const acc = account();
    const c = clock();
    const [a, b] = [meter(c, 50), meter(c, 50)];
    const calls = await Promise.all(Array.from({ length: 200 }, (_, i) => admit(i % 2 ? a : b, key(acc))));
    expect(calls.filter((t) => t.ok)).toHaveLength(50);
    expect(calls.filter((t) => !t.ok && t.status === 429)).toHaveLength(150);
    await b.close();
    expect(await a.month(acc, '2026-05')).toEqual({ count: 50, days: { '04': 50 }, testCount: 0, testDays: {} });
  });

  it('spends one block per lease: a burst of calls costs a few chain writes, not one each', async () => {
    const acc = account();
    const c = clock();
    const q = monthly(c);
    for (let i = 0; i < 100; i++) {
      expect((await q.take(acc, 1_000_000)).ok).toBe(true);
      c.advance(10);
    }
    const links = await h.store.db.collection('usage').countDocuments({ _id: { $regex: `^${acc}:2026-05:L` } as never });
    expect(links).toBeGreaterThan(0);
    expect(links).toBeLessThan(15);
  });

  it('gives a released call back: not counted, and its unit spent again', async () => {
    const acc = account();
    const c = clock();
    const m = meter(c, 10);
    const first = await admit(m, key(acc));
    const second = await admit(m, key(acc));
    if (!first.ok || !second.ok) throw new Error('refused');
    await second.release();
    expect(await m.month(acc, '2026-05')).toEqual({ count: 1, days: { '04': 1 }, testCount: 0, testDays: {} });
    const more = [];
    for (let i = 0; i < 12; i++) more.push(await admit(m, key(acc)));
    expect(more.filter((t) => t.ok)).toHaveLength(9);
  });

  it("returns a closing process's unused units to the others", async () => {
    const acc = account();
    const c = clock();
    const [a, b] = [monthly(c), monthly(c)];
    // A burst: a's blocks grow (1, 2, 4) and it holds units it has not spent.
    for (let i = 0; i < 3; i++) expect((await a.take(acc, 40)).ok).toBe(true);
    let taken = 0;
    while ((await b.take(acc, 40)).ok) taken++;
    expect(taken).toBeLessThan(37);
    await a.close();
    while ((await b.take(acc, 40)).ok) taken++;
    expect(taken).toBe(37);
  });

  it('starts a new month from zero, and a new process continues the chain where it stands', async () => {
    const acc = account();
    const c = clock();
    const a = meter(c, 6);
    for (let i = 0; i < 5; i++) expect((await admit(a, key(acc))).ok).toBe(true);
    await a.close();
    const later = meter(c, 6);
    expect((await admit(later, key(acc))).ok).toBe(true);
    expect(await admit(later, key(acc))).toEqual({ ok: false, status: 429 });
    c.set(Date.UTC(2026, 5, 1, 0, 0, 0));
    expect((await admit(later, key(acc))).ok).toBe(true);
    expect((await later.month(acc, '2026-05')).count).toBe(6);
    expect(await later.month(acc, '2026-06')).toEqual({ count: 1, days: { '01': 1 }, testCount: 0, testDays: {} });
  });

  it('counts test-key calls per day apart, never against the quota, and uncounts them when given back', async () => {
    const acc = account();
    const c = clock();
    const m = meter(c, 1);
    for (let i = 0; i < 3; i++) expect((await admit(m, key(acc, 'test'))).ok).toBe(true);
    const refunded = await admit(m, key(acc, 'test'));
    if (refunded.ok) await refunded.release();
    expect((await admit(m, key(acc))).ok).toBe(true);
    expect(await m.month(acc, '2026-05')).toEqual({ count: 1, days: { '04': 1 }, testCount: 3, testDays: { '04': 3 } });
  });
});

describe('per-second leases (several processes)', () => {
  it('admit exactly the plan rps across two processes each second, then afresh the next second; swept later', async () => {
    const acc = account();
    const c = clock();
    const [a, b] = [perSecond(c), perSecond(c)];
    const burst = () => Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).take(acc, 20)));
    expect((await burst()).filter((t) => t.ok)).toHaveLength(20);
    c.advance(1_000);
    expect((await burst()).filter((t) => t.ok)).toHaveLength(20);
    expect(await h.store.rate.sweep(new Date(c.now() - 1_000))).toBe(0);
    expect(await h.store.rate.sweep(new Date(c.now()))).toBeGreaterThan(0);
    expect(await h.store.rate.sweep(new Date(c.now() + 1_000))).toBeGreaterThan(0);
  });
});
