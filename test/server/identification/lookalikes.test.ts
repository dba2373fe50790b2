// Look-alike devices (identical fingerprints, different device tokens)
// through HTTP on the real database: a visit without its token is weighed
// against the visitor's networks and how recently its own token was seen,
// and two devices merged anyway are told apart once their tokens take turns.
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
});
// Each case in an account of its own: what an account has seen (its look-alikes, its crowds) is evidence.
beforeEach(async () => {
  const c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
});
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
let seed = 40_000;

const DAY = 86_400_000;

/** A phone of one popular model, as its browser reports it: every phone of the model and locale shows the same. */
const phone = (s: number): V => {
  const v = deviceValues(s);
  return {
    ...v,
    navigator: { hardwareConcurrency: 8, platform: 'Linux armv81', languages: ['en-US', 'en'] },
    screenResolution: { width: 412, height: 915 },
    touchSupport: { maxTouchPoints: 5, touchEvent: true, touchStart: true },
    userAgent: {
      ...v.userAgent,
      userAgent: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36',
      mobile: true,
      platform: 'Android',
    },
  };
};

async function identifyFrom(ip: string, v: V, advance = 60_000): Promise<{ visitorId: string; confidence: number; visitCount: number }> {
  h.clock.advance(advance);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status).toBe(200);
  return res.body;
}

describe('look-alike devices', () => {
  it('links a device that lost its storage when it comes back from a network it used', async () => {
    const d = withNewToken(deviceValues(++seed));
    const home = await identifyFrom('81.2.69.10', d);
    for (let i = 0; i < 3; i++) await identifyFrom('81.2.69.10', d, 2 * DAY);
    // A week later from the same /24 (a new address from the household's ISP block), storage cleared: a new token.
    const cleared = await identifyFrom('81.2.69.77', withNewToken(d), 7 * DAY);
    expect(cleared.visitorId).toBe(home.visitorId);
    expect(cleared.visitCount).toBe(5);
  });

  it('does not merge an identical device on another network; each keeps its own visitor', async () => {
    const a = withNewToken(deviceValues(++seed));
    const b = withNewToken(a);
    const first = await identifyFrom('81.2.69.10', a);
    const twin = await identifyFrom('2.125.160.10', b);
    expect(twin.visitorId).not.toBe(first.visitorId);
    expect(twin.visitCount).toBe(1);
    // Both keep being recognised by their tokens, whichever network they use.
    expect((await identifyFrom('2.125.160.10', a)).visitorId).toBe(first.visitorId);
    expect((await identifyFrom('81.2.69.10', b)).visitorId).toBe(twin.visitorId);
  });

  it('finds the look-alike by its own network after it clears its storage', async () => {
    const a = withNewToken(deviceValues(++seed));
    const b = withNewToken(a);
    const first = await identifyFrom('81.2.69.10', a);
    const twin = await identifyFrom('2.125.160.10', b);
    expect(twin.visitorId).not.toBe(first.visitorId);
    // Each used at home for a while, with its own token.
    for (let i = 0; i < 3; i++) {
      await identifyFrom('81.2.69.10', a, DAY);
      await identifyFrom('2.125.160.10', b);
    }
    // B's exact fingerprint belongs to A's visitor; the network picks B's own.
    const bCleared = await identifyFrom('2.125.160.99', withNewToken(b));
    expect(bCleared.visitorId).toBe(twin.visitorId);
    const aCleared = await identifyFrom('81.2.69.200', withNewToken(a));
    expect(aCleared.visitorId).toBe(first.visitorId);
  });

  it('compares IPv6 clients by their /56, the prefix a home is given', async () => {
    const d = withNewToken(deviceValues(++seed));
    const first = await identifyFrom('2a02:c7f:1234:5678::1', d);
    const sameHome = await identifyFrom('2a02:c7f:1234:56ab::2', withNewToken(d));
    expect(sameHome.visitorId).toBe(first.visitorId);
    // Another home in the same /48, an identical device that just visited with a token of its own: not this one.
    const b = withNewToken(deviceValues(++seed));
    const bHome = await identifyFrom('2a02:c7f:1234:7700::1', b);
    const twinNextDoor = await identifyFrom('2a02:c7f:1234:9a00::1', withNewToken(b));
    expect(twinNextDoor.visitorId).not.toBe(bHome.visitorId);
  });

  it('keeps two identical devices on one network apart once their tokens show two devices', async () => {
    // An office of identical laptops behind one address: the fingerprint and the network agree.
    const a = withNewToken(deviceValues(++seed));
    const b = withNewToken(a);
    const office = '81.2.69.50';
    const va = await identifyFrom(office, a);
    await identifyFrom(office, b);
    // A again, then B again: were they one visitor, two tokens alternating on it are two devices.
    expect((await identifyFrom(office, a)).visitorId).toBe(va.visitorId);
    const vb = await identifyFrom(office, b);
    expect(vb.visitorId).not.toBe(va.visitorId);
    // From then on each token names its own device's visitor.
    expect((await identifyFrom(office, b)).visitorId).toBe(vb.visitorId);
    expect((await identifyFrom(office, a)).visitorId).toBe(va.visitorId);
  });

  it('separates look-alikes merged on a shared network: the later token moves to a visitor of its own', async () => {
    // The second device, identical and on the same network, arrives with a token of its own and is linked to the
    // first by fingerprint and network; its token then keeps coming back, alternating with the first device's.
    // (A private window's token never separates: tested below and in the linker's tests.)
    const a = withNewToken(deviceValues(++seed));
    const office = '81.2.69.60';
    const va = await identifyFrom(office, a);
    const b = withNewToken(a);
    const merged = await identifyFrom(office, b);
    expect(merged.visitorId).toBe(va.visitorId);
    expect((await identifyFrom(office, a)).visitorId).toBe(va.visitorId);
    const separated = await identifyFrom(office, b);
    expect(separated.visitorId).not.toBe(va.visitorId);
    expect(separated.visitCount).toBe(1);
    expect((await identifyFrom(office, b)).visitorId).toBe(separated.visitorId);
    expect((await identifyFrom(office, a)).visitorId).toBe(va.visitorId);
    const history = await request(h.app).get(`/v1/demo/visits/${separated.visitorId}`).set('x-api-key', secret);
    expect(history.body.totalVisits).toBe(2);
  });

  it('does not separate a device from its own private-window or cleared tokens', async () => {
    const d = withNewToken(deviceValues(++seed));
    const net = '81.2.69.90';
    const first = await identifyFrom(net, d);
    // A private window (a token used once), back to normal, then storage cleared for good.
    const privateWindow = { ...withNewToken(d), incognito: { ...d.incognito, likely: true } };
    expect((await identifyFrom(net, privateWindow)).visitorId).toBe(first.visitorId);
    const own = await identifyFrom(net, d);
    expect(own.visitorId).toBe(first.visitorId);
    const fresh = withNewToken(d);
    const linked = await identifyFrom(net, fresh);
    expect(linked.visitorId).toBe(first.visitorId);
    // A fingerprint link claims less than the visitor's own token does.
    expect(linked.confidence).toBeLessThan(own.confidence);
    expect((await identifyFrom(net, fresh)).visitorId).toBe(first.visitorId);
    expect((await identifyFrom(net, d)).visitCount).toBe(6);
  });

  it('keeps two identical phones in one household apart while both keep their tokens', async () => {
    const home = '81.2.69.120';
    const a = withNewToken(phone(++seed));
    const b = withNewToken(a);
    const va = await identifyFrom(home, a);
    const vb = await identifyFrom(home, b);
    expect(vb.visitorId).not.toBe(va.visitorId);
    // Days of both phones at home, in turns and at once.
    for (let day = 1; day <= 5; day++) {
      expect((await identifyFrom(home, a, DAY)).visitorId).toBe(va.visitorId);
      expect((await identifyFrom(home, b)).visitorId).toBe(vb.visitorId);
      expect((await identifyFrom(home, b)).visitorId).toBe(vb.visitorId);
      expect((await identifyFrom(home, a)).visitorId).toBe(va.visitorId);
    }
    const history = (id: string) => request(h.app).get(`/v1/demo/visits/${id}`).set('x-api-key', secret);
    for (const id of [va.visitorId, vb.visitorId]) {
      const v = await history(id);
      expect(v.body).toMatchObject({ visitorId: id, totalVisits: 11 });
      expect(v.body.mergedFrom ?? []).toEqual([]);
    }
  });
});
