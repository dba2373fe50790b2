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
