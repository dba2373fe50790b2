// The customer's linkedId as evidence, through HTTP on the real database: a
// device that lost its storage on a network it never used is found again by
// the linkedId it was seen with; a linkedId never joins two devices whose
// fingerprints disagree, never reaches another account's visitors, and does
// nothing while the project's setting is off.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let shop: Customer;
let live: string;
let secret: string;
let otherLive: string;
let otherSecret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  shop = await signUp(h);
  [live, secret] = [await shop.key('live'), await shop.key('secret')];
  const other = await signUp(h);
  [otherLive, otherSecret] = [await other.key('live'), await other.key('secret')];
});
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
let seed = 91_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HOME = '81.2.69.40';
const AWAY = '2.125.160.90';

async function identify(ip: string, v: V, linkedId: string | null, key = live, advance = DAY): Promise<{ visitorId: string; requestId: string }> {
  h.clock.advance(advance);
  const res = await request(h.app)
    .post('/v1/identify')
    .set('x-api-key', key)
    .set('x-forwarded-for', ip)
    .send(identifyBody(v, linkedId === null ? {} : { linkedId }));
  expect(res.status).toBe(200);
  return res.body;
}

/** A device's history at home, signed in with `linkedId`; then a visit that lost its storage, from a network it never used. */
async function lostOnNewNetwork(linkedId: string) {
  const d = withNewToken(deviceValues(++seed));
  const home = await identify(HOME, d, linkedId);
  for (let i = 0; i < 3; i++) expect((await identify(HOME, d, linkedId)).visitorId).toBe(home.visitorId);
  const away = await identify(AWAY, withNewToken(d), linkedId);
  return { d, home, away };
}

const setEvidence = async (on: boolean) => {
  const res = await shop.agent.patch(`/api/projects/${shop.projectId}`).set('origin', shop.origin).send({ linkedIdEvidence: on });
  expect(res.status).toBe(200);
  expect(res.body.linkedIdEvidence).toBe(on);
};

describe("the customer's linkedId as evidence", () => {
  it('is on by default, and a device that lost its storage on a new network keeps its visitor by it', async () => {
    const project = (await shop.agent.get('/api/projects')).body.projects[0];
    expect(project.linkedIdEvidence).toBe(true);
    const { home, away } = await lostOnNewNetwork('ada@example.com');
    expect(away.visitorId).toBe(home.visitorId);
    // The event keeps the linkedId as sent.
    const e = await request(h.app).get(`/v1/events/${away.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(e.body.linkedId).toBe('ada@example.com');
  });

  it('the setting off: the same loss on a new network starts a new visitor, and on again it counts again', async () => {
    await setEvidence(false);
    try {
      const { home, away } = await lostOnNewNetwork('grace@example.com');
      expect(away.visitorId).not.toBe(home.visitorId);
    } finally {
      await setEvidence(true);
    }
    // On again: another device signed in to the same account is found by it.
    const { home, away } = await lostOnNewNetwork('grace@example.com');
    expect(away.visitorId).toBe(home.visitorId);
  });

  it('never joins two devices whose fingerprints disagree, on the same network or another', async () => {
    const laptop = withNewToken(deviceValues(++seed));
    const first = await identify(HOME, laptop, 'family@example.com');
    for (let i = 0; i < 3; i++) await identify(HOME, laptop, 'family@example.com');
    // Another computer of the same account, without storage, at home and elsewhere.
    const other = deviceValues(++seed);
    const atHome = await identify(HOME, withNewToken(other), 'family@example.com');
    const elsewhere = await identify(AWAY, withNewToken(other), 'family@example.com');
    expect(atHome.visitorId).not.toBe(first.visitorId);
    expect(elsewhere.visitorId).not.toBe(first.visitorId);
    // The laptop itself is still its own visitor.
    expect((await identify(HOME, laptop, 'family@example.com')).visitorId).toBe(first.visitorId);
  });

  it("never crosses accounts: the same device and linkedId at another customer's site is that customer's visitor", async () => {
    const { d, home } = await lostOnNewNetwork('shared@example.com');
    const there = await identify(AWAY, withNewToken(d), 'shared@example.com', otherLive);
    expect(there.visitorId).not.toBe(home.visitorId);
    // Neither account reads the other's visitor.
    const visits = (id: string, key: string) => request(h.app).get(`/v1/demo/visits/${id}`).set('x-api-key', key);
    expect((await visits(home.visitorId, otherSecret)).status).toBe(404);
    expect((await visits(there.visitorId, secret)).status).toBe(404);
    // Back home at the first site, the device is still its visitor there.
    expect((await identify(HOME, withNewToken(d), 'shared@example.com')).visitorId).toBe(home.visitorId);
  });
});
