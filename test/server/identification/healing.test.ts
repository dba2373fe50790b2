// Split healing and sparse payloads through HTTP on the real database: a
// device that lost its storage on a new network is re-joined once it comes
// back to a network of its old visitor, both ids keep working, merges are
// exactly once under concurrency, and aliases stay private to their account.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let live: string;
let secret: string;
let otherSecret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  const c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
  otherSecret = await (await signUp(h)).key('secret');
});
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
let seed = 70_000;
const HOUR = 3_600_000;

interface Result {
  requestId: string;
  visitorId: string;
  confidence: number;
  visitCount: number;
}

async function identifyFrom(ip: string, v: Partial<V>, advance = HOUR): Promise<Result> {
  h.clock.advance(advance);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status).toBe(200);
  return res.body;
}

const visits = (id: string, key = secret) => request(h.app).get(`/v1/demo/visits/${id}`).set('x-api-key', key);
const event = (id: string, key = secret) => request(h.app).get(`/v1/events/${id}`).set('authorization', `Bearer ${key}`);

/** A device with a history at home, then a visit without its storage from a network it never used. */
async function splitDevice(home: string, away: string) {
  const d = withNewToken(deviceValues(++seed));
  const old = await identifyFrom(home, d);
  for (let i = 0; i < 3; i++) await identifyFrom(home, d, 24 * HOUR);
  const cleared = withNewToken(d);
  const split = await identifyFrom(away, cleared, 24 * HOUR);
  return { d, old, cleared, split };
}

describe('split healing', () => {
  it('re-joins a device that cleared its storage on a new network once it is back home; both ids resolve', async () => {
    const { old, cleared, split } = await splitDevice('81.2.69.10', '2.125.160.7');
    // Its history is at home; a new network alone is not enough (another identical device could be there).
    if (split.visitorId !== old.visitorId) {
      const home = await identifyFrom('81.2.69.10', cleared);
      expect(home.visitorId).toBe(old.visitorId);
      expect(home.visitCount).toBe(6);
      // The split's id is an alias: its history is the survivor's, and its event names both.
      const viaAlias = await visits(split.visitorId);
      expect(viaAlias.status).toBe(200);
      expect(viaAlias.body.visitorId).toBe(old.visitorId);
      expect(viaAlias.body.mergedFrom).toEqual([split.visitorId]);
      expect(viaAlias.body.totalVisits).toBe(6);
      expect(viaAlias.body.visits.map((v: { originalVisitorId?: string }) => v.originalVisitorId ?? null)).toContain(split.visitorId);
      const e = await event(split.requestId);
      expect(e.body.visitorId).toBe(old.visitorId);
      expect(e.body.originalVisitorId).toBe(split.visitorId);
    }
    // From then on identify answers with the surviving id, by token as by fingerprint.
    expect((await identifyFrom('81.2.69.10', cleared)).visitorId).toBe(old.visitorId);
    expect((await identifyFrom('2.125.160.7', cleared)).visitorId).toBe(old.visitorId);
  });

  it('collapses a chain of splits to the first id: every id resolves to it', async () => {
    const home = '81.2.72.10';
    const { old, split } = await splitDevice(home, '2.125.163.7');
    expect(split.visitorId).not.toBe(old.visitorId);
    // Cleared again on yet another new network: a second split, whose suspects are both earlier ids.
    const again = withNewToken(deviceValues(seed));
    const second = await identifyFrom('5.9.164.7', again, 24 * HOUR);
    expect(new Set([old.visitorId, split.visitorId, second.visitorId]).size).toBe(3);
    // Back home with the last token: the last split is re-joined, and so is the split it was re-joined into.
    const back = await identifyFrom(home, again);
    expect(back.visitorId).toBe(old.visitorId);
    expect(back.visitCount).toBe(7);
    for (const id of [split.visitorId, second.visitorId]) {
      const v = await visits(id);
      expect(v.body.visitorId).toBe(old.visitorId);
      expect(v.body.totalVisits).toBe(7);
    }
    const survivor = await visits(old.visitorId);
    expect([...survivor.body.mergedFrom].sort()).toEqual([split.visitorId, second.visitorId].sort());
    for (const r of [split, second]) expect((await event(r.requestId)).body.visitorId).toBe(old.visitorId);
  });

  it('keeps aliases private to their account', async () => {
    const { old, cleared, split } = await splitDevice('81.2.70.10', '2.125.161.7');
    await identifyFrom('81.2.70.10', cleared);
    for (const id of [old.visitorId, split.visitorId]) expect((await visits(id, otherSecret)).status).toBe(404);
    expect((await event(split.requestId, otherSecret)).status).toBe(404);
  });

  it('leaves one consistent state when a merge races with visits of either visitor', async () => {
    for (let run = 0; run < 8; run++) {
      const home = `81.2.71.${10 + run}`;
      const { d, old, cleared, split } = await splitDevice(home, `2.125.162.${10 + run}`);
      h.clock.advance(HOUR);
      const results = await Promise.all([
        ...Array.from({ length: 3 }, () => request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', home).send(identifyBody(cleared))),
        request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', home).send(identifyBody(d)),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      // Whatever happened, each id resolves to one visitor whose history holds every visit exactly once.
      const ids = new Set([old.visitorId, split.visitorId, ...results.map((r) => r.body.visitorId as string)]);
      const survivors = new Map<string, number>();
      for (const id of ids) {
        const v = await visits(id);
        expect(v.status).toBe(200);
        survivors.set(v.body.visitorId, v.body.totalVisits);
      }
      expect([...survivors.values()].reduce((a, b) => a + b, 0)).toBe(5 + 4);
      for (const r of results) expect(survivors.has((await event(r.body.requestId)).body.visitorId)).toBe(true);
    }
  });
});

describe('sparse payloads', () => {
  // The four signals the spec shows (2.1), nothing else: no token, no screen, no time zone.
  const sparse = (s: number) => {
    const v = deviceValues(s);
    return { canvas: v.canvas, webgl: v.webgl, audio: v.audio, navigator: v.navigator };
  };

  it('identifies the spec-shaped request twice from one address as one visitor, with low confidence', async () => {
    const v = sparse(++seed);
    const first = await identifyFrom('81.2.72.10', v);
    const again = await identifyFrom('81.2.72.10', v);
    expect(again.visitorId).toBe(first.visitorId);
    expect(again.visitCount).toBe(2);
    expect(again.confidence).toBeLessThan(0.7);
  });

  it('keeps different sparse devices apart; the same sparse signals elsewhere get a low confidence at most', async () => {
    const a = await identifyFrom('81.2.73.10', sparse(++seed));
    const b = await identifyFrom('81.2.73.10', sparse(++seed));
    expect(b.visitorId).not.toBe(a.visitorId);
    // Four signals from an unrelated network: too little to say much either way.
    const v = sparse(++seed);
    const here = await identifyFrom('81.2.74.10', v);
    const elsewhere = await identifyFrom('203.0.113.80', v);
    if (elsewhere.visitorId === here.visitorId) expect(elsewhere.confidence).toBeLessThan(0.5);
    else expect(elsewhere.confidence).toBeLessThan(0.7);
  });
});

describe('private windows', () => {
  it('keeps a device that alternates normal and private windows at home on one visitor, never unmerged', async () => {
    const home = '81.2.75.10';
    const d = withNewToken(deviceValues(++seed));
    const first = await identifyFrom(home, d);
    const ids = [first.visitorId];
    for (let day = 0; day < 4; day++) {
      // A private window (its own token, flagged private) opened beside the normal one: pages of both in turns;
      // the next day a private window used alone for a few pages, then the normal one again.
      const beside = { ...withNewToken(d), incognito: { ...d.incognito, likely: true } };
      ids.push((await identifyFrom(home, beside, 24 * HOUR)).visitorId);
      ids.push((await identifyFrom(home, d)).visitorId);
      ids.push((await identifyFrom(home, beside)).visitorId);
      ids.push((await identifyFrom(home, d)).visitorId);
      const alone = { ...withNewToken(d), incognito: { ...d.incognito, likely: true } };
      ids.push((await identifyFrom(home, alone, 24 * HOUR)).visitorId);
      ids.push((await identifyFrom(home, alone, 60_000)).visitorId);
      ids.push((await identifyFrom(home, d)).visitorId);
    }
    expect(new Set(ids)).toEqual(new Set([first.visitorId]));
    const history = await visits(first.visitorId);
    expect(history.body.totalVisits).toBe(ids.length);
    expect(history.body.mergedFrom ?? []).toEqual([]);
  });
});
