// The customer's linkedId as evidence, through HTTP on the real database: a
// device that lost its storage on a network it never used is found again by
// the linkedId it was seen with, when the site's own server vouches for it
// (its first-party proxy sets it from the site's session); a linkedId never
// joins two devices whose fingerprints disagree, never reaches another
// account's visitors, and does nothing while the project's setting is off. One
// the page sends in the body is anyone's to write: a tag, never evidence.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { PROXY_HEADERS } from '../../../contract/proxy.js';
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
  proxySecrets.set(live, await proxySecret(shop));
  proxySecrets.set(otherLive, await proxySecret(other));
});

const proxySecrets = new Map<string, string>();
async function proxySecret(c: Customer): Promise<string> {
  const res = await c.agent.post(`/api/projects/${c.projectId}/proxy/secret`).set('origin', c.origin).send({});
  expect(res.status).toBe(201);
  return res.body.secret;
}
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
let seed = 91_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HOME = '81.2.69.40';
const AWAY = '2.125.160.90';

/**
 * A visit through the site's first-party proxy, which sets the signed-in user's id from the site's own session
 * (no device cookie: each visit is as a browser that keeps none, so storage is the agent's token alone).
 */
async function identify(ip: string, v: V, linkedId: string | null, key = live, advance = DAY): Promise<{ visitorId: string; requestId: string }> {
  h.clock.advance(advance);
  const req = request(h.app)
    .post('/v1/identify')
    .set('x-api-key', key)
    .set('origin', 'https://shop.example.com')
    .set(PROXY_HEADERS.secret, proxySecrets.get(key)!)
    .set(PROXY_HEADERS.clientIp, ip)
    .set(PROXY_HEADERS.host, 'shop.example.com')
    .set(PROXY_HEADERS.proto, 'https');
  if (linkedId !== null) req.set(PROXY_HEADERS.linkedId, linkedId);
  const res = await req.send(identifyBody(v));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The same visit sent by the page itself, its linkedId in the body. */
async function fromPage(ip: string, v: V, linkedId: string): Promise<{ visitorId: string; requestId: string }> {
  h.clock.advance(DAY);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', ip).send(identifyBody(v, { linkedId }));
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

  it('never takes the linkedId the page sends: a tag on the event, no evidence, even beside the same one confirmed before', async () => {
    const linkedId = 'page@example.com';
    const d = withNewToken(deviceValues(++seed));
    const home = await identify(HOME, d, linkedId);
    for (let i = 0; i < 3; i++) expect((await identify(HOME, d, linkedId)).visitorId).toBe(home.visitorId);
    const away = await fromPage(AWAY, withNewToken(d), linkedId);
    expect(away.visitorId).not.toBe(home.visitorId);
    const e = await request(h.app).get(`/v1/events/${away.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(e.body.linkedId).toBe(linkedId);
  });

  it('refuses a proxy linkedId header it cannot use with 400 naming it', async () => {
    const res = await request(h.app)
      .post('/v1/identify')
      .set('x-api-key', live)
      .set('origin', 'https://shop.example.com')
      .set(PROXY_HEADERS.secret, proxySecrets.get(live)!)
      .set(PROXY_HEADERS.clientIp, HOME)
      .set(PROXY_HEADERS.host, 'shop.example.com')
      .set(PROXY_HEADERS.proto, 'https')
      .set(PROXY_HEADERS.linkedId, 'x'.repeat(257))
      .send(identifyBody(deviceValues(++seed)));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`${PROXY_HEADERS.linkedId}: must be 1 to 256 characters`);
    // Without the proxy's secret the header is ignored, like the other proxy headers.
    const direct = await request(h.app)
      .post('/v1/identify')
      .set('x-api-key', live)
      .set(PROXY_HEADERS.linkedId, 'x'.repeat(257))
      .send(identifyBody(deviceValues(++seed)));
    expect(direct.status).toBe(200);
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
