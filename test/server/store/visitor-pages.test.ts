// Where a visit's summary is stored: the visitor document holds the current
// page and hands a finished page to visitPages when the next one starts; a
// visit is recorded by a compare-and-swap on the visitor's `rev`, so
// concurrent visits of one device get distinct sequence numbers and none is lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VISITS_PER_PAGE } from '../../../server/store/visits.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  const c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
});
afterAll(async () => {
  await h.close();
});

const identify = async (seed: number) => {
  const res = await h
    .http()
    .post('/v1/identify')
    .set('x-api-key', live)
    .send(identifyBody(deviceValues(seed)));
  expect(res.status).toBe(200);
  return res.body as { requestId: string; visitorId: string; visitCount: number };
};
const history = async (visitorId: string, before?: string) => {
  const res = await h
    .http()
    .get(`/v1/demo/visits/${visitorId}${before ? `?before=${before}` : ''}`)
    .set('authorization', `Bearer ${secret}`)
    .set('x-api-key', secret);
  expect(res.status).toBe(200);
  return res.body as { visits: { id: string }[]; totalVisits: number };
};
const seqs = (visits: { seq: number }[] | undefined) => (visits ?? []).map((v) => v.seq).sort((a, b) => a - b);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('visit summaries', () => {
  it('the visitor holds the current page; a finished page moves to visitPages when the next starts', async () => {
    let visitorId = '';
    for (let i = 0; i < VISITS_PER_PAGE; i++) {
      h.clock.advance(60_000);
      visitorId = (await identify(501)).visitorId;
    }
    const visitor = () => h.store.visitors.get(visitorId);
    const page = async (n: number) =>
      (await h.store.db.collection('visitPages').findOne({ _id: `${visitorId}:${n}` } as never))?.visits as { seq: number }[] | undefined;
    expect(seqs((await visitor())?.visits)).toEqual(range(1, VISITS_PER_PAGE));
    expect(await page(0)).toBeUndefined();

    for (let i = 0; i < 5; i++) {
      h.clock.advance(60_000);
      await identify(501);
    }
    expect(seqs(await page(0))).toEqual(range(1, VISITS_PER_PAGE));
    expect(seqs((await visitor())?.visits)).toEqual(range(VISITS_PER_PAGE + 1, VISITS_PER_PAGE + 5));

    // The history reads both, newest first, without a gap or a repeat.
    const first = await history(visitorId);
    expect(first.totalVisits).toBe(VISITS_PER_PAGE + 5);
    const second = await history(visitorId, first.visits.at(-1)!.id);
    const ids = [...first.visits, ...second.visits].map((v) => v.id);
    expect(ids).toHaveLength(VISITS_PER_PAGE + 5);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('concurrent visits of one device get distinct sequence numbers and every summary is kept', async () => {
    const { visitorId } = await identify(502);
    h.clock.advance(60_000);
    const results = await Promise.all(Array.from({ length: 12 }, () => identify(502)));
    expect(new Set(results.map((r) => r.visitorId))).toEqual(new Set([visitorId]));
    expect(results.map((r) => r.visitCount).sort((a, b) => a - b)).toEqual(range(2, 13));
    const doc = await h.store.visitors.get(visitorId);
    expect(doc?.visitCount).toBe(13);
    expect(doc?.rev).toBe(13);
    expect(seqs(doc?.visits)).toEqual(range(1, 13));
    expect((await history(visitorId)).visits).toHaveLength(13);
  });
});

describe('the stored form of a visitor (server/store/visitors.ts)', () => {
  const raw = (visitorId: string) => h.store.db.collection('visitors').findOne({ _id: visitorId } as never) as Promise<Record<string, unknown>>;

  it('holds its lists of small objects as JSON text, and a visit appends one text to its summaries', async () => {
    const { visitorId } = await identify(503);
    h.clock.advance(60_000);
    await identify(503);
    const doc = await raw(visitorId);
    expect((doc.components as unknown[]).every((c) => typeof c === 'string')).toBe(true);
    expect([typeof doc.tokens, typeof doc.prefixes, typeof doc.suspects]).toEqual(['string', 'string', 'string']);
    expect((doc.recent as unknown[]).map((r) => typeof r)).toEqual(['string', 'string']);
    // Summaries and recent activity as arrays of their values (seq first; time, address, country).
    expect((doc.visits as string[]).map((v) => (JSON.parse(v) as unknown[])[0])).toEqual([1, 2]);
    expect(JSON.parse((doc.recent as string[])[0]!)).toEqual([expect.any(Number), expect.any(String), expect.any(String)]);
    // Read back through the store, it is the document identification wrote.
    const read = await h.store.visitors.get(visitorId);
    expect(read?.tokens?.[0]?.hash).toMatch(/^[\w-]{43}$/);
    expect(read?.visits?.map((v) => v.requestId)).toEqual((doc.visits as string[]).map((v) => (JSON.parse(v) as unknown[])[1]));
    expect(read?.visits?.[1]).toEqual(expect.objectContaining({ seq: 2, requestId: expect.stringMatching(/^req_/), riskFactors: expect.any(Array) }));
  });

  it('reads and updates a document written in the older form (objects), losing nothing', async () => {
    const { visitorId } = await identify(504);
    h.clock.advance(60_000);
    await identify(504);
    // Rewrite it as an older version stored it: every list as objects (and bump rev, as a write would).
    const before = (await h.store.visitors.get(visitorId))!;
    await h.store.db.collection('visitors').replaceOne({ _id: visitorId } as never, { ...before, rev: (before.rev ?? 0) + 1 });
    expect(typeof (await raw(visitorId)).tokens).toBe('object');

    h.clock.advance(60_000);
    const again = await identify(504);
    expect(again.visitorId).toBe(visitorId);
    expect(again.visitCount).toBe(3);
    const after = (await h.store.visitors.get(visitorId))!;
    expect(after.visits?.map((v) => v.seq)).toEqual([1, 2, 3]);
    expect(after.tokens?.map((t) => t.hash)).toEqual(before.tokens?.map((t) => t.hash));
    expect(after.components).toEqual(before.components);
    expect(after.recent).toHaveLength(3);
    // The older summaries stay objects, the new one is text: both are read.
    expect((await raw(visitorId)).visits as unknown[]).toEqual([...before.visits!, expect.any(String)]);
    const listed = await history(visitorId);
    expect(listed.totalVisits).toBe(3);
    expect(listed.visits).toHaveLength(3);
  });
});
