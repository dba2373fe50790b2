// The optional fontMetrics signal through HTTP on the real database: stored
// in the full event and on the visitor's component set (the related-visitors
// model reads it there as `fontMetrics`), refused when malformed like any
// other signal, and left out of identification: the same visits with or
// without it, or with it changing, give the same visitors and confidences.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignalValues } from '../../../contract/signals.js';
import { COMPONENTS, exactKey, extractComponents, partialKeys, RELATED_ONLY } from '../../../server/identification/components.js';
import { similarity } from '../../../server/identification/matcher.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, drifted, identifyBody, withNewToken, withoutToken } from '../../support/signals.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":1000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
});
afterAll(async () => {
  await h.close();
});

const METRICS: SignalValues['fontMetrics'] = { hash: '5d41402abc4b2a76b9719d911017c592', fonts: 9, exact: 9 };
let seed = 36_200;

async function account() {
  const c = await signUp(h);
  return { live: await c.key('live'), secret: await c.key('secret') };
}
const identify = (key: string, body: object, ip = '81.2.69.20') =>
  request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(body);

describe('fontMetrics over HTTP', () => {
  it("is stored in the full event's signals.client and on the visitor's newest component set", async () => {
    const { live, secret } = await account();
    const res = await identify(live, identifyBody({ ...deviceValues(++seed), fontMetrics: METRICS }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const event = await request(h.app).get(`/v1/events/${res.body.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(event.status).toBe(200);
    expect(event.body.signals.client.fontMetrics).toEqual(METRICS);
    const visitor = await h.store.visitors.get(res.body.visitorId);
    expect(visitor?.components[0]?.fontMetrics).toBe(METRICS.hash);
  });

  it('refuses a malformed value with the 400 a malformed spec signal gets', async () => {
    const { live } = await account();
    const d = deviceValues(++seed);
    const badCanvas = await identify(live, identifyBody({ ...d, canvas: { hash: '', isFarbled: false } }));
    expect(badCanvas.status).toBe(400);
    for (const bad of [
      { ...METRICS, hash: '' },
      { ...METRICS, hash: 'a'.repeat(129) },
      { ...METRICS, fonts: 65 },
      { ...METRICS, exact: 1.5 },
      { hash: METRICS.hash, fonts: 9 },
    ]) {
      const res = await identify(live, identifyBody({ ...d, fontMetrics: bad as SignalValues['fontMetrics'] }));
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(Object.keys(badCanvas.body).sort());
      expect(JSON.stringify(res.body)).toContain('fontMetrics');
    }
  });

  it('changes nothing identification answers: the same visits with it (changing) or without it give the same visitors and confidences', async () => {
    const d = deviceValues(++seed);
    const e = deviceValues(++seed);
    const visits = [d, drifted(d), withoutToken(drifted(d)), e, withNewToken(d), withoutToken(e)];
    const run = async (withMetrics: boolean) => {
      const { live } = await account();
      const out: { visitor: number; confidence: number; sets: number }[] = [];
      const seen: string[] = [];
      for (const [i, v] of visits.entries()) {
        h.clock.advance(3_600_000);
        const fontMetrics = { ...METRICS, hash: `${METRICS.hash.slice(0, -1)}${i}` };
        const res = await identify(live, identifyBody(withMetrics ? { ...v, fontMetrics } : v));
        expect(res.status).toBe(200);
        if (!seen.includes(res.body.visitorId)) seen.push(res.body.visitorId);
        const stored = await h.store.visitors.get(res.body.visitorId);
        out.push({ visitor: seen.indexOf(res.body.visitorId), confidence: res.body.confidence, sets: stored!.components.length });
      }
      return out;
    };
    const without = await run(false);
    expect(new Set(without.map((o) => o.visitor)).size).toBe(2);
    expect(await run(true)).toEqual(without);
  });
});

describe('fontMetrics as a component', () => {
  it('is kept as `fontMetrics` but is no component the matcher weighs, nor part of any key', () => {
    const v = deviceValues(++seed);
    const plain = extractComponents(v);
    const withMetrics = extractComponents({ ...v, fontMetrics: METRICS });
    expect(withMetrics).toEqual({ ...plain, fontMetrics: METRICS.hash });
    expect(RELATED_ONLY).toEqual(['fontMetrics']);
    expect(Object.keys(COMPONENTS)).not.toContain('fontMetrics');
    expect(exactKey(withMetrics)).toBe(exactKey(plain));
    expect(partialKeys(withMetrics)).toEqual(partialKeys(plain));
    expect(similarity(plain, { ...withMetrics, fontMetrics: 'other' })).toEqual(similarity(plain, plain));
  });
});
