// The per-process cache of recent visitors (server/identification/visitorCache.ts):
// a returning device is identified from memory and the compare-and-swap that
// records the visit proves it fresh. Two processes on one database, each
// with its own cache (the harness's otherProcess: its own connection, caches
// and locks): what one changes (visits, a merge, a deletion, a token moved)
// the other respects on its next identify, whatever its cache still holds.
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractComponents } from '../../../server/identification/components.js';
import { StoreIndex } from '../../../server/identification/storeIndex.js';
import { VisitorCache } from '../../../server/identification/visitorCache.js';
import type { VisitorDoc } from '../../../server/store/visitors.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let other: Awaited<ReturnType<Harness['otherProcess']>>;
let c: Customer;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  other = await h.otherProcess();
  c = await signUp(h);
  [live, secret] = await Promise.all([c.key('live'), c.key('secret')]);
});
afterAll(async () => {
  await h.close();
});

type Process = { http: Harness['http'] };
const token = (device: number) => `cache_device_${device}_${'t'.repeat(16)}`;
const body = (device: number, t = token(device)) => identifyBody({ ...deviceValues(device), deviceToken: { token: t, storage: 'localStorage', createdAt: 1 } });
async function identify(p: Process, device: number, t?: string) {
  h.clock.advance(1_000);
  const res = await p.http().post('/v1/identify').set('x-api-key', live).send(body(device, t));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { visitorId: string; visitCount: number; requestId: string };
}
const history = async (visitorId: string) => {
  const res = await h.http().get(`/v1/demo/visits/${visitorId}`).set('authorization', `Bearer ${secret}`);
  expect(res.status).toBe(200);
  return res.body as { visitorId: string; totalVisits: number; visits: { id: string }[] };
};
const seqs = async (visitorId: string) => (await h.store.visitors.get(visitorId))!.visits!.map((v) => v.seq);

describe('the cache of one process', () => {
  it('vouches for a token only with the visitor document of the revision it was seen at', () => {
    const cache = new VisitorCache(10);
    const doc = { _id: 'iq_A', accountId: 'acc_1', rev: 3, visitCount: 1, visits: [] } as unknown as VisitorDoc;
    cache.remember(doc, ['t1']);
    expect(cache.byToken('acc_1', 't1')).toEqual(doc);
    expect(cache.byToken('acc_2', 't1')).toBeNull();
    expect(cache.byToken('acc_1', 't2')).toBeNull();
    // The visitor written again (another token): t1 was seen at revision 3, not 4.
    cache.remember({ ...doc, rev: 4 }, ['t2']);
    expect(cache.byToken('acc_1', 't1')).toBeNull();
    expect(cache.byToken('acc_1', 't2')?.rev).toBe(4);
    cache.forget('iq_A');
    expect(cache.byToken('acc_1', 't2')).toBeNull();
    expect(cache.doc('iq_A')).toBeNull();
    // Size 0 keeps nothing.
    const off = new VisitorCache(0);
    off.remember(doc, ['t1']);
    expect([off.byToken('acc_1', 't1'), off.doc('iq_A'), off.size]).toEqual([null, null, 0]);
  });

  it('holds a visitor without its visit summaries, and serves it only to a visit that continues the page', () => {
    const cache = new VisitorCache(10);
    const summary = { seq: 1, requestId: 'req_1', id: 'v1', timestamp: 1, country: '', city: '', region: '', asn: null, asnOrg: '', asnCategory: 'UNKNOWN' };
    const doc = { _id: 'iq_A', accountId: 'acc_1', rev: 1, visitCount: 19, visits: [summary], recent: [{ t: 1, ip: '203.0.113.9', country: '' }] };
    cache.remember(doc as unknown as VisitorDoc, ['t1']);
    expect(cache.byToken('acc_1', 't1')).toEqual({ ...doc, visits: [] });
    // The 21st visit starts a page: the 20 summaries it moves are not here.
    cache.remember({ ...doc, rev: 2, visitCount: 20 } as unknown as VisitorDoc, ['t1']);
    expect([cache.byToken('acc_1', 't1'), cache.doc('iq_A')]).toEqual([null, null]);
  });

  it('holds at most its size', () => {
    const cache = new VisitorCache(3);
    for (let i = 0; i < 10; i++) cache.remember({ _id: `iq_${i}`, accountId: 'acc_1', rev: 1, visitCount: 1 } as VisitorDoc, [`t${i}`]);
    expect(cache.size).toBe(3);
    expect(cache.byToken('acc_1', 't9')?._id).toBe('iq_9');
    expect(cache.byToken('acc_1', 't0')).toBeNull();
  });
});

describe('two processes, each with its cache', () => {
  it('identifying one device alternately: one visitor, sequence numbers exact, no visit lost', async () => {
    const first = await identify(h, 1);
    const answers = [first];
    for (let i = 0; i < 11; i++) answers.push(await identify(i % 2 ? h : other, 1));
    expect(new Set(answers.map((a) => a.visitorId))).toEqual(new Set([first.visitorId]));
    expect(answers.map((a) => a.visitCount)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(await seqs(first.visitorId)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const visits = await history(first.visitorId);
    expect(visits.totalVisits).toBe(12);
    expect(new Set(visits.visits.map((v) => v.id)).size).toBe(12);
  });

  it('a cache full of stale entries (the other process wrote every visitor since) still answers right', async () => {
    const devices = Array.from({ length: 12 }, (_, i) => 100 + i);
    const ids = new Map<number, string>();
    for (const d of devices) ids.set(d, (await identify(h, d)).visitorId);
    for (const d of devices) expect((await identify(other, d)).visitorId).toBe(ids.get(d));
    for (const d of devices) {
      const again = await identify(h, d);
      expect([again.visitorId, again.visitCount]).toEqual([ids.get(d), 3]);
      expect(await seqs(ids.get(d)!)).toEqual([1, 2, 3]);
    }
  });

  it('a merge made by the other process: the next identify answers the survivor', async () => {
    // The device's visitor, cached by this process.
    const young = (await identify(h, 200)).visitorId;
    await identify(h, 200);
    // An older visitor of the same device (as a split leaves it), merged into by the other process.
    const now = h.clock.now();
    const old = `iq_${ulid(now - 1_000_000)}`;
    await other.store.visitors.create({
      _id: old,
      accountId: c.accountId,
      firstSeenAt: now,
      lastSeenAt: now,
      visitCount: 0,
      components: [extractComponents(deviceValues(200))],
      recent: [],
      rev: 0,
    });
    await new StoreIndex(other.store, c.accountId, now).merge(young, old, now);
    const answer = await identify(h, 200);
    expect(answer.visitorId).toBe(old);
    const event = await h.http().get(`/v1/events/${answer.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(event.body.visitorId).toBe(old);
    expect((await h.store.visitors.get(young))?.mergedInto).toBe(old);
  });

  it('a deletion made by the other process: the next identify does not bring the deleted visitor back, halfway or done', async () => {
    const deletions = (other.app.locals.services as { deletions: { crashAfter: string | null; resume(): Promise<number>; idle(): Promise<void> } }).deletions;
    const deleted = (await identify(h, 300)).visitorId;
    await identify(h, 300);
    // The job stops once the visitor is hidden (its document left the account), before anything is removed.
    deletions.crashAfter = 'hide';
    expect((await other.http().delete(`/v1/visitors/${deleted}`).set('authorization', `Bearer ${secret}`)).status).toBe(202);
    await deletions.idle();
    const halfway = await identify(h, 300);
    expect(halfway.visitorId).not.toBe(deleted);
    deletions.crashAfter = null;
    await deletions.resume();
    const done = await identify(h, 300);
    expect(done.visitorId).not.toBe(deleted);
    expect(await h.store.visitors.get(deleted)).toBeNull();
  });

  it('a token moved by the other process: the next identify follows it', async () => {
    const before = (await identify(h, 400)).visitorId;
    await identify(h, 400);
    // The other process tells the token apart from its visitor (as linking does when two devices took turns with it).
    const index = new StoreIndex(other.store, c.accountId, h.clock.now());
    const own = await index.createVisitor(extractComponents(deviceValues(400)), [], null);
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(token(400)).digest('base64url');
    expect(await index.moveToken(hash, before, own)).toBe(own);
    const answer = await identify(h, 400);
    expect(answer.visitorId).toBe(own);
    expect((await h.store.visitors.get(before))?.visitCount).toBe(2);
  });
});
