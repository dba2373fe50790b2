// The monthly quota across processes: two Leases instances on one database
// stand for two processes leasing from the same chain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../server/clock.js';
import { Leases } from '../server/metering/leases.js';
import { createHarness, type Harness } from './support/harness.js';

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

describe('monthly quota leases', () => {
  it('admits exactly the limit to 200 concurrent calls spread over two processes, and counts each', async () => {
    const acc = account();
    const c = clock();
    const [a, b] = [Leases.monthly(h.store.usage, c), Leases.monthly(h.store.usage, c)];
    const takes = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).take(acc, 50)));
    expect(takes.filter((t) => t.ok)).toHaveLength(50);
    const refused = takes.find((t) => !t.ok);
    expect(refused).toEqual({ ok: false, count: 50 });
    await Promise.all([a.flush(), b.flush()]);
    expect(await a.month(acc, '2026-05')).toEqual({ count: 50, days: { '04': 50 }, testCount: 0, testDays: {} });
  });

  it('spends one block per lease: a burst of calls costs a few chain writes, not one each', async () => {
    const acc = account();
    const c = clock();
    const q = Leases.monthly(h.store.usage, c);
    for (let i = 0; i < 100; i++) {
      expect((await q.take(acc, 1_000_000)).ok).toBe(true);
      c.advance(10);
    }
    const links = await h.store.db.collection('usage').countDocuments({ _id: { $regex: `^${acc}:2026-05:L` } as never });
    expect(links).toBeGreaterThan(0);
    expect(links).toBeLessThan(15);
  });

  it('gives a released unit back and counts only what was kept, per day', async () => {
    const acc = account();
    const c = clock();
    const q = Leases.monthly(h.store.usage, c);
    const first = await q.take(acc, 10);
    const second = await q.take(acc, 10);
    if (!first.ok || !second.ok) throw new Error('refused');
    await q.flush();
    second.release();
    expect(await q.month(acc, '2026-05')).toEqual({ count: 1, days: { '04': 1 }, testCount: 0, testDays: {} });
    const all = [];
    for (let i = 0; i < 12; i++) all.push(await q.take(acc, 10));
    expect(all.filter((t) => t.ok)).toHaveLength(9);
  });

  it("returns a closing process's unused units to the others", async () => {
    const acc = account();
    const c = clock();
    const [a, b] = [Leases.monthly(h.store.usage, c), Leases.monthly(h.store.usage, c)];
    // A burst: a's blocks grow (1, 2, 4) and it holds units it has not spent.
    for (let i = 0; i < 3; i++) expect((await a.take(acc, 40)).ok).toBe(true);
    let taken = 0;
    while ((await b.take(acc, 40)).ok) taken++;
    expect(taken).toBeLessThan(37);
    await a.close();
    while ((await b.take(acc, 40)).ok) taken++;
    expect(taken).toBe(37);
    await b.flush();
    expect((await b.month(acc, '2026-05')).count).toBe(40);
  });

  it('starts a new month from zero, and a new process continues the chain where it stands', async () => {
    const acc = account();
    const c = clock();
    const a = Leases.monthly(h.store.usage, c);
    for (let i = 0; i < 5; i++) expect((await a.take(acc, 6)).ok).toBe(true);
    await a.close();
    const later = Leases.monthly(h.store.usage, c);
    expect((await later.take(acc, 6)).ok).toBe(true);
    expect(await later.take(acc, 6)).toEqual({ ok: false, count: 6 });
    c.set(Date.UTC(2026, 5, 1, 0, 0, 0));
    expect((await later.take(acc, 6)).ok).toBe(true);
    await later.flush();
    expect((await later.month(acc, '2026-05')).count).toBe(6);
    expect(await later.month(acc, '2026-06')).toEqual({ count: 1, days: { '01': 1 }, testCount: 0, testDays: {} });
  });
});

describe('per-second leases (several processes)', () => {
  it('admit exactly the plan rps across two processes each second, then afresh the next second; swept later', async () => {
    const acc = account();
    const c = clock();
    const [a, b] = [Leases.perSecond(h.store.rate, c), Leases.perSecond(h.store.rate, c)];
    const burst = () => Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).take(acc, 20)));
    expect((await burst()).filter((t) => t.ok)).toHaveLength(20);
    c.advance(1_000);
    expect((await burst()).filter((t) => t.ok)).toHaveLength(20);
    expect(await h.store.rate.sweep(new Date(Date.now() + 1_000))).toBeGreaterThan(0);
  });
});

describe('test-key calls', () => {
  it('are counted per day apart from the quota, and uncounted when given back', async () => {
    const acc = account();
    const c = clock();
    const q = Leases.monthly(h.store.usage, c);
    q.countTest(acc);
    const uncount = q.countTest(acc);
    uncount();
    expect((await q.take(acc, 10)).ok).toBe(true);
    expect(await q.month(acc, '2026-05')).toEqual({ count: 1, days: { '04': 1 }, testCount: 1, testDays: { '04': 1 } });
  });
});
