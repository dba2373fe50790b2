// The high-recall id over HTTP on the real database: a device answers its
// own on a first visit and keeps it; a cleared-storage revisit that
// visitorId splits (storage gone and a language added, at home) joins it;
// every visit of a visitor answers the same one (it never separates what
// visitorId joins); the full event, event search and the typed client's
// search see it; another device keeps its own.
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServerClient } from '../../../clients/node/index.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

type V = ReturnType<typeof deviceValues>;
interface Answer {
  requestId: string;
  visitorId: string;
  highRecallVisitorId: string;
}

let h: Harness;
let srv: Listening;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  srv = await listenApp(h.app);
});
// Each case in an account of its own: what an account has seen is evidence.
beforeEach(async () => {
  const c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

const DAY = 86_400_000;
let seed = 90_000;

async function identify(v: V, ip: string, advance = 60_000): Promise<Answer> {
  h.clock.advance(advance);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
const event = async (requestId: string) => (await request(h.app).get(`/v1/events/${requestId}`).set('authorization', `Bearer ${secret}`)).body;
const search = async (query: string) =>
  ((await request(h.app).get(`/v1/events?limit=100&${query}`).set('authorization', `Bearer ${secret}`)).body.events as { requestId: string }[])
    .map((e) => e.requestId)
    .sort();

/** A device at home, twice, then back a month later with its storage cleared and a language added: visitorId splits it. */
async function splitDevice() {
  const d = deviceValues(++seed);
  const first = await identify(d, '81.2.69.10');
  const again = await identify(d, '81.2.69.10', DAY);
  const cleared = withNewToken({ ...d, navigator: { ...d.navigator, languages: ['de-DE', 'en-US', 'en'] } });
  const split = await identify(cleared, '81.2.69.21', 30 * DAY);
  return { d, first, again, cleared, split };
}

describe('highRecallVisitorId', () => {
  it("is the visitor's own on a first visit, and stays with it", async () => {
    const d = deviceValues(++seed);
    const first = await identify(d, '81.2.69.10');
    expect(first.highRecallVisitorId).toBe(first.visitorId);
    expect(await identify(d, '2.125.160.10', DAY)).toMatchObject({ visitorId: first.visitorId, highRecallVisitorId: first.visitorId });
    expect((await event(first.requestId)).highRecallVisitorId).toBe(first.visitorId);
    // Stored only where it differs from the visitor: nothing on this event.
    expect((await h.store.db.collection('events').findOne({ _id: first.requestId as never }))?.highRecallVisitorId).toBeUndefined();
  });

  it('joins a cleared-storage revisit that visitorId splits, on every later visit of the split too', async () => {
    const { first, cleared, split } = await splitDevice();
    expect(split.visitorId).not.toBe(first.visitorId);
    expect(split.highRecallVisitorId).toBe(first.visitorId);
    // The split's next visit by its own token: the same visitor, the same high-recall id.
    const next = await identify(cleared, '81.2.69.21', DAY);
    expect(next).toMatchObject({ visitorId: split.visitorId, highRecallVisitorId: first.visitorId });
  });

  it('the full event, event search and the typed client see it; another device keeps its own', async () => {
    const { first, again, split } = await splitDevice();
    const other = await identify(deviceValues(++seed), '81.2.69.10');
    expect(other.highRecallVisitorId).toBe(other.visitorId);
    expect(await event(split.requestId)).toMatchObject({ visitorId: split.visitorId, highRecallVisitorId: first.visitorId });
    // The group: the first visitor's own events and those answered its id.
    expect(await search(`highRecallVisitorId=${first.visitorId}`)).toEqual([first.requestId, again.requestId, split.requestId].sort());
    expect(await search(`highRecallVisitorId=${split.visitorId}`)).toEqual([]);
    expect(await search(`highRecallVisitorId=${other.visitorId}`)).toEqual([other.requestId]);
    // With another filter driving the search, the group is checked on its entries.
    expect(await search(`highRecallVisitorId=${first.visitorId}&ip=81.2.69.21`)).toEqual([split.requestId]);
    expect(await search(`highRecallVisitorId=${first.visitorId}&visitorId=${split.visitorId}`)).toEqual([split.requestId]);
    const client = createServerClient({ baseUrl: srv.url, secretKey: secret });
    const page = await client.searchEvents({ highRecallVisitorId: first.visitorId, limit: 100 });
    expect(page.events.map((e) => e.requestId).sort()).toEqual([first.requestId, again.requestId, split.requestId].sort());
    expect(page.events.every((e) => e.highRecallVisitorId === first.visitorId)).toBe(true);
    expect((await request(h.app).get('/v1/events?highRecallVisitorId=nope').set('authorization', `Bearer ${secret}`)).status).toBe(400);
    expect(await search(`highRecallVisitorId=iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z`)).toEqual([]);
  });

  it("a replay of a device's signals with a fresh token from another network is given neither of its ids, and leaves its answers alone", async () => {
    const d = deviceValues(++seed);
    const home = await identify(d, '81.2.69.10');
    await identify(d, '81.2.69.10', DAY);
    // Everything the browser sends copied, but not the token: the fingerprint can be forged, the network it comes from
    // cannot, and a copy seen nowhere the device was is too like a look-alike for either threshold.
    const replay = await identify(withNewToken(d), '2.125.160.77', DAY);
    expect(replay.visitorId).not.toBe(home.visitorId);
    expect(replay.highRecallVisitorId).toBe(replay.visitorId);
    // The device itself: its own visitorId and group, unchanged.
    expect(await identify(d, '81.2.69.10', DAY)).toMatchObject({ visitorId: home.visitorId, highRecallVisitorId: home.visitorId });
  });

  it('a deleted group leaves its members their own id when read', async () => {
    const { first, split } = await splitDevice();
    expect((await request(h.app).delete(`/v1/visitors/${first.visitorId}`).set('authorization', `Bearer ${secret}`)).status).toBe(202);
    await (h.app.locals.services as { deletions: { idle(): Promise<void> } }).deletions.idle();
    expect((await event(split.requestId)).highRecallVisitorId).toBe(split.visitorId);
  });
});
