// Verdicts, scores and velocity from client-side evidence, through identify.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIGH_ACTIVITY } from '../../../server/risk/engine.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
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

let seed = 9000;
type V = ReturnType<typeof deviceValues>;
const identify = async (v: V) => {
  const res = await request(h.app).post('/v1/identify').set('x-api-key', live).send(identifyBody(v));
  expect(res.status).toBe(200);
  return res.body;
};
const event = async (id: string) => (await request(h.app).get(`/v1/events/${id}`).set('authorization', `Bearer ${secret}`)).body;

describe('verdicts from client signals', () => {
  it('a clean device: no verdict fires, scores are zero', async () => {
    const r = await identify(deviceValues(++seed));
    expect(r.botProbability).toBe(0);
    expect(r.suspectScore).toBe(0);
    expect(r.riskFactors).toEqual([]);
    for (const [name, v] of Object.entries(r.verdicts)) expect([name, (v as { result: boolean }).result]).toEqual([name, false]);
  });

  it('headless markers: headless, bot, HEADLESS_BROWSER', async () => {
    const v = deviceValues(++seed);
    const r = await identify({ ...v, automation: { ...v.automation, webdriver: true, headlessUserAgent: true } });
    expect(r.verdicts.headless.result).toBe(true);
    expect(r.verdicts.bot).toEqual({
      result: true,
      probability: 0.9,
      kind: 'bad',
      info: { category: 'browser_automation', provider: null, name: null, identity: 'unknown', confidence: 0.9, listDate: null },
    });
    expect(r.riskFactors).toContain('HEADLESS_BROWSER');
    expect(r.suspectScore).toBe(Math.round((100 * 7) / 91));
  });

  it('software renderer without automation markers: no bot verdict, but a virtual machine', async () => {
    const v = deviceValues(++seed);
    const r = await identify({
      ...v,
      webgl: { renderer: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)', vendor: 'Google Inc. (Google)' },
    });
    expect(r.riskFactors).toEqual(expect.arrayContaining(['SOFTWARE_RENDERER']));
    expect(r.verdicts.bot).toEqual({ result: false, probability: 0.35, kind: 'human' });
    // A CPU rasteriser in a browser that is not automated points at a VM or a GPU-less host.
    expect(r.verdicts.virtualMachine.result).toBe(true);
  });

  it('a hypervisor GPU: virtualMachine and VIRTUAL_MACHINE', async () => {
    const v = deviceValues(++seed);
    const r = await identify({ ...v, virtualMachine: { softwareRenderer: false, virtualGpu: 'VMware', markers: ['virtualGpu'] } });
    expect(r.verdicts.virtualMachine.result).toBe(true);
    expect(r.riskFactors).toContain('VIRTUAL_MACHINE');
  });

  it('API lies and readback noise: tampering with an anomaly score', async () => {
    const v = deviceValues(++seed);
    const small = await identify({ ...v, tampering: { lieCount: 1, lies: ['Navigator.hardwareConcurrency'], canvasNoise: 0, audioNoise: 0 } });
    expect(small.verdicts.tampering).toEqual({ result: false, anomalyScore: 15 });
    const big = await identify({ ...deviceValues(++seed), tampering: { lieCount: 3, lies: ['a', 'b', 'c'], canvasNoise: 12, audioNoise: 0 } });
    expect(big.verdicts.tampering).toEqual({ result: true, anomalyScore: 75 });
    expect(big.riskFactors).toContain('TAMPERING');
  });

  it('incognito, devtools and privacy browser are reported from their signals', async () => {
    const v = deviceValues(++seed);
    const r = await identify({
      ...v,
      incognito: { likely: true, quotaMb: 2000, heapLimitMb: 4096, opfsError: null },
      devtools: { open: true, widthGap: 400, heightGap: 90 },
      privacyBrowser: { name: 'Brave', markers: ['navigator.brave'] },
    });
    expect(r.verdicts.incognito.result).toBe(true);
    expect(r.verdicts.devtools.result).toBe(true);
    expect(r.verdicts.privacyBrowser).toEqual({ result: true, name: 'Brave' });
    expect(r.riskFactors).toEqual(expect.arrayContaining(['INCOGNITO', 'DEVTOOLS', 'PRIVACY_BROWSER']));
    expect(r.suspectScore).toBe(Math.round((100 * (4 + 6)) / 91));
  });

  it('keeps scores within bounds when everything fires', async () => {
    const v = deviceValues(++seed);
    const r = await identify({
      ...v,
      automation: { ...v.automation, webdriver: true, globals: ['__playwright__binding__'] },
      webgl: { renderer: 'llvmpipe (LLVM 15.0.6, 256 bits)', vendor: 'Mesa' },
      tampering: { lieCount: 40, lies: ['x'], canvasNoise: 999, audioNoise: 999 },
      incognito: { likely: true, quotaMb: 1, heapLimitMb: 1, opfsError: 'SecurityError' },
      devtools: { open: true, widthGap: 900, heightGap: 900 },
      privacyBrowser: { name: 'Firefox resistFingerprinting', markers: ['a', 'b'] },
      virtualMachine: { softwareRenderer: true, virtualGpu: 'QEMU', markers: ['virtualGpu'] },
    });
    expect(r.botProbability).toBeGreaterThan(0.9);
    expect(r.botProbability).toBeLessThanOrEqual(1);
    expect(r.verdicts.tampering.anomalyScore).toBe(100);
    expect(r.suspectScore).toBeGreaterThan(0);
    expect(r.suspectScore).toBeLessThanOrEqual(100);
    expect(Number.isInteger(r.suspectScore)).toBe(true);
    expect(r.confidence).toBeLessThan(1);
  });
});

describe('velocity and high activity', () => {
  it('counts events of the visitor in 5 minute, 1 hour and 24 hour windows', async () => {
    const v = deviceValues(++seed);
    await identify(v); // t0
    h.clock.advance(2 * 3600_000);
    await identify(v); // t0 + 2h
    h.clock.advance(30 * 60_000);
    await identify(v); // t0 + 2h30
    h.clock.advance(2 * 60_000);
    const last = await identify(v); // t0 + 2h32
    const e = await event(last.requestId);
    expect(e.verdicts.velocity.events).toEqual({ '5m': 2, '1h': 3, '24h': 4 });
    expect(e.verdicts.velocity.distinctIp).toEqual({ '5m': 1, '1h': 1, '24h': 1 });
    h.clock.advance(24 * 3600_000);
    const next = await identify(v);
    expect((await event(next.requestId)).verdicts.velocity.events).toEqual({ '5m': 1, '1h': 1, '24h': 1 });
  });

  it(`flags highActivity above ${HIGH_ACTIVITY.perHour} identifications in an hour`, async () => {
    const v = deviceValues(++seed);
    let r;
    for (let i = 0; i < HIGH_ACTIVITY.perHour; i++) {
      r = await identify(v);
      h.clock.advance(1000);
    }
    expect(r.verdicts.highActivity.result).toBe(false);
    r = await identify(v);
    expect(r.verdicts.highActivity.result).toBe(true);
    expect(r.riskFactors).toContain('HIGH_ACTIVITY');
    h.clock.advance(3600_000);
    r = await identify(v);
    expect(r.verdicts.highActivity.result).toBe(false);
  });
});
