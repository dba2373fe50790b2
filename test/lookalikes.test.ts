// Look-alike devices (identical fingerprints, different device tokens)
// through HTTP on the real database: a fingerprint-only link needs the
// visit's network among the visitor's recent ones, and two devices merged
// anyway are told apart once their tokens take turns.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './support/harness.js';
import { signUp } from './support/dashboard.js';
import { deviceValues, drifted, identifyBody } from './support/signals.js';

let h: Harness;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  const c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
});
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
let seed = 40_000;
let tokens = 0;
const withToken = (v: V): V => ({ ...v, deviceToken: { token: `lookalike_token_${++tokens}_${'x'.repeat(12)}`, storage: 'localStorage', createdAt: 1 } });

async function identifyFrom(ip: string, v: V): Promise<{ visitorId: string; confidence: number; visitCount: number }> {
  h.clock.advance(60_000);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status).toBe(200);
  return res.body;
}

describe('look-alike devices', () => {
  it('links a device that lost its storage when it comes back from a network it used', async () => {
    const d = withToken(deviceValues(++seed));
    const home = await identifyFrom('81.2.69.10', d);
    await identifyFrom('81.2.69.10', d);
    // Same /24 (a new address from the same household router's ISP block); new token, updated browser.
    const cleared = await identifyFrom('81.2.69.77', withToken(drifted(d)));
    expect(cleared.visitorId).toBe(home.visitorId);
    expect(cleared.visitCount).toBe(3);
  });

  it('does not merge an identical device on another network; each keeps its own visitor', async () => {
    const a = withToken(deviceValues(++seed));
    const b = withToken(a);
    const first = await identifyFrom('81.2.69.10', a);
    const twin = await identifyFrom('2.125.160.10', b);
    expect(twin.visitorId).not.toBe(first.visitorId);
    expect(twin.visitCount).toBe(1);
    // Both keep being recognised by their tokens, whichever network they use.
    expect((await identifyFrom('2.125.160.10', a)).visitorId).toBe(first.visitorId);
    expect((await identifyFrom('81.2.69.10', b)).visitorId).toBe(twin.visitorId);
  });

  it('finds the look-alike by its own network after it clears its storage', async () => {
    const a = withToken(deviceValues(++seed));
    const b = withToken(a);
    const first = await identifyFrom('81.2.69.10', a);
    const twin = await identifyFrom('2.125.160.10', b);
    expect(twin.visitorId).not.toBe(first.visitorId);
    // B's exact fingerprint belongs to A's visitor; the network picks B's own.
    const bCleared = await identifyFrom('2.125.160.99', withToken(b));
    expect(bCleared.visitorId).toBe(twin.visitorId);
    const aCleared = await identifyFrom('81.2.69.200', withToken(a));
    expect(aCleared.visitorId).toBe(first.visitorId);
  });

  it('compares IPv6 clients by their /48', async () => {
    const d = withToken(deviceValues(++seed));
    const first = await identifyFrom('2a02:c7f:1234:5678::1', d);
    const sameSite = await identifyFrom('2a02:c7f:1234:9abc::2', withToken(d));
    expect(sameSite.visitorId).toBe(first.visitorId);
    const elsewhere = await identifyFrom('2a02:c7f:9999::1', withToken(d));
    expect(elsewhere.visitorId).not.toBe(first.visitorId);
  });

  it('tells apart two devices merged on a shared network once their tokens take turns', async () => {
    // An office of identical laptops behind one address: the fingerprint and the network agree.
    const a = withToken(deviceValues(++seed));
    const b = withToken(a);
    const office = '81.2.69.50';
    const va = await identifyFrom(office, a);
    const merged = await identifyFrom(office, b);
    expect(merged.visitorId).toBe(va.visitorId);
    // A again, then B again: two tokens alternating on one visitor are two devices.
    expect((await identifyFrom(office, a)).visitorId).toBe(va.visitorId);
    const separated = await identifyFrom(office, b);
    expect(separated.visitorId).not.toBe(va.visitorId);
    expect(separated.visitCount).toBe(1);
    // From then on each token names its own device's visitor.
    expect((await identifyFrom(office, b)).visitorId).toBe(separated.visitorId);
    expect((await identifyFrom(office, a)).visitorId).toBe(va.visitorId);
    const events = await request(h.app).get(`/v1/demo/visits/${separated.visitorId}`).set('x-api-key', secret);
    expect(events.body.totalVisits).toBe(2);
  });

  it('does not separate a device from its own private-window or cleared tokens', async () => {
    const d = withToken(deviceValues(++seed));
    const net = '81.2.69.90';
    const first = await identifyFrom(net, d);
    // A private window (a token used once), back to normal, then storage cleared for good.
    expect((await identifyFrom(net, withToken(d))).visitorId).toBe(first.visitorId);
    expect((await identifyFrom(net, d)).visitorId).toBe(first.visitorId);
    const fresh = withToken(d);
    const linked = await identifyFrom(net, fresh);
    expect(linked.visitorId).toBe(first.visitorId);
    // Linked by fingerprint and network: an exact match's confidence (confidence.ts).
    expect(linked.confidence).toBe(0.7);
    const again = await identifyFrom(net, fresh);
    expect(again.visitorId).toBe(first.visitorId);
    // The token joined the visitor through that link and keeps its uncertainty.
    expect(again.confidence).toBe(0.75);
    expect((await identifyFrom(net, fresh)).visitCount).toBe(6);
    // The visitor's own token from its first visit.
    expect((await identifyFrom(net, d)).confidence).toBe(0.99);
  });
});
