// Sealed results: per project, identify answers an AES-256-GCM blob instead
// of the compact result; unseal opens it with the key shown once; a tampered
// blob or another key is rejected; plain results come back when it is off.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createIdentifyClient,
  DEFAULT_MAX_AGE_MS,
  isSealed,
  unseal,
  UnexpectedResponseError,
  UnsealError,
  type IdentifyRequest,
} from '../../../clients/node/index.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let srv: Listening;
let c: Customer;
let live: string;
let secret: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  srv = await listenApp(h.app);
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

let seed = 700;
const identify = async () => {
  const res = await request(h.app)
    .post('/v1/identify')
    .set('x-api-key', live)
    .send(identifyBody(deviceValues(++seed)));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Record<string, unknown>;
};
const sealingPath = () => `/api/projects/${c.projectId}/sealing`;
const newKey = async () => {
  const res = await c.agent.post(`${sealingPath()}/key`).set('origin', c.origin).send({});
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { enabled: boolean; since: string; key: string };
};
/** Flips one bit of the blob's byte at `at` (negative: from the end). */
const flip = (blob: string, at: number) => {
  const b = Buffer.from(blob, 'base64');
  const i = at < 0 ? b.length + at : at;
  b[i] = b[i]! ^ 1;
  return b.toString('base64');
};

describe('sealed results', () => {
  it('are off by default: identify answers the plain compact result', async () => {
    expect((await c.agent.get(sealingPath())).body).toEqual({ enabled: false, since: null });
    const plain = await identify();
    expect(plain).toHaveProperty('visitorId');
    expect(plain).not.toHaveProperty('sealedResult');
  });

  it('round trip: identify answers only a blob, and unseal with the key shown once gives the result', async () => {
    const { enabled, since, key } = await newKey();
    expect(enabled).toBe(true);
    expect(since).toBe(new Date(h.clock.now()).toISOString());
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    // The key is shown once: never again by the API, stored only encrypted, never logged.
    expect((await c.agent.get(sealingPath())).body).toEqual({ enabled: true, since });
    const stored = await h.store.projects.byId(c.projectId);
    expect(stored?.sealing?.key).toMatch(/^sb1:/);
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(JSON.stringify((await c.agent.get('/api/projects')).body)).not.toContain(key);

    const body = await identify();
    // Only the blob, and `kind` telling it from the plain result.
    expect(Object.keys(body).sort()).toEqual(['kind', 'sealedResult']);
    expect(body.kind).toBe('sealed');
    const result = unseal(body.sealedResult as string, key, { now: h.clock.now() });
    expect(result).toMatchObject({
      kind: 'result',
      requestId: expect.stringMatching(/^req_/),
      visitorId: expect.stringMatching(/^iq_/),
      visitCount: 1,
      timestamp: h.clock.now(),
    });
    const event = await request(h.app).get(`/v1/events/${result.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(event.body).toMatchObject({ requestId: result.requestId, visitorId: result.visitorId, confidence: result.confidence });
    // The key as bytes works as well.
    expect(unseal(body.sealedResult as string, Buffer.from(key, 'base64'), { now: h.clock.now() })).toEqual(result);
    expect(h.logs()).not.toContain(key);
  });

  it('rejects a tampered blob and a wrong key', async () => {
    const { key } = await newKey();
    const blob = (await identify()).sealedResult as string;
    expect(() => unseal(blob, key, { now: h.clock.now() })).not.toThrow();
    for (const at of [0, 5, 20, -1, -20]) expect(() => unseal(flip(blob, at), key, { now: h.clock.now() }), `byte ${at}`).toThrow(UnsealError);
    expect(() => unseal(blob.slice(0, 20), key, { now: h.clock.now() })).toThrow(UnsealError);
    expect(() => unseal('', key, { now: h.clock.now() })).toThrow(UnsealError);
    expect(() => unseal(blob, randomBytes(32), { now: h.clock.now() })).toThrow(UnsealError);
    expect(() => unseal(blob, randomBytes(16), { now: h.clock.now() })).toThrow(TypeError);
    // Rotating: the old key no longer opens new blobs.
    const rotated = await newKey();
    const next = (await identify()).sealedResult as string;
    expect(() => unseal(next, key, { now: h.clock.now() })).toThrow(UnsealError);
    expect(unseal(next, rotated.key, { now: h.clock.now() }).requestId).toMatch(/^req_/);
  });

  it('refuses a blob older than maxAgeMs (5 minutes by default) and opens a fresh one: a blob cannot be replayed for ever', async () => {
    const { key } = await newKey();
    const blob = (await identify()).sealedResult as string;
    const sealedAt = h.clock.now();
    expect(DEFAULT_MAX_AGE_MS).toBe(300_000);
    expect(unseal(blob, key, { now: sealedAt + DEFAULT_MAX_AGE_MS }).timestamp).toBe(sealedAt);
    const old = (() => {
      try {
        unseal(blob, key, { now: sealedAt + DEFAULT_MAX_AGE_MS + 1 });
      } catch (err) {
        return err;
      }
    })();
    expect(old).toBeInstanceOf(UnsealError);
    expect(old).toMatchObject({ reason: 'expired', message: 'sealed result expired: sealed 300 s ago, more than maxAgeMs (300000 ms) from now' });
    // From the future beyond the window: a clock problem, refused the same way.
    expect(() => unseal(blob, key, { now: sealedAt - DEFAULT_MAX_AGE_MS - 1 })).toThrow(/sealed 300 s in the future/);
    // The window is the caller's: tighter, wider, or off.
    expect(() => unseal(blob, key, { now: sealedAt + 10_001, maxAgeMs: 10_000 })).toThrow(/expired/);
    expect(unseal(blob, key, { now: sealedAt + 86_400_000, maxAgeMs: 86_400_000 }).timestamp).toBe(sealedAt);
    expect(unseal(blob, key, { now: sealedAt + 10 * 365 * 86_400_000, maxAgeMs: Infinity }).timestamp).toBe(sealedAt);
    for (const maxAgeMs of [-1, Number.NaN]) expect(() => unseal(blob, key, { now: sealedAt, maxAgeMs })).toThrow(TypeError);
    // Without `now`, the wall clock: this blob carries the test's fixed 2026-01-15 time, long past.
    expect(() => unseal(blob, key)).toThrow(expect.objectContaining({ reason: 'expired' }));
    // Altered or with another key says so, not 'expired'.
    expect(() => unseal(flip(blob, 20), key, { now: sealedAt })).toThrow(expect.objectContaining({ reason: 'rejected' }));
    expect(() => unseal('', key, { now: sealedAt })).toThrow(expect.objectContaining({ reason: 'malformed' }));
  });

  it('typed client: identifyResponse answers the sealed form, identify says to use it', async () => {
    const { key } = await newKey();
    const client = createIdentifyClient({ baseUrl: srv.url, apiKey: live, validateResponses: true });
    const body = identifyBody(deviceValues(++seed)) as unknown as IdentifyRequest;
    const r = await client.identifyResponse(body);
    expect(isSealed(r)).toBe(true);
    if (isSealed(r)) expect(unseal(r.sealedResult, key, { now: h.clock.now() }).visitorId).toMatch(/^iq_/);
    await expect(client.identify(body)).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it('turned off: plain results again; other accounts and cross-site requests are refused', async () => {
    const other = await signUp(h);
    const notTheirs = await other.agent.get(sealingPath());
    expect([notTheirs.status, notTheirs.body]).toEqual([404, { error: 'Project not found', code: 'project_not_found' }]);
    expect((await other.agent.post(`${sealingPath()}/key`).set('origin', other.origin).send({})).status).toBe(404);
    expect((await c.agent.post(`${sealingPath()}/key`).send({})).status).toBe(403);
    expect((await c.agent.post(`${sealingPath()}/key`).set('origin', c.origin).send({ key: 'mine' })).status).toBe(400);
    expect((await request(h.app).get(sealingPath())).status).toBe(401);

    const off = await c.agent.delete(sealingPath()).set('origin', c.origin);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ enabled: false, since: null });
    expect((await h.store.projects.byId(c.projectId))?.sealing).toBeNull();
    const plain = await identify();
    expect(plain).toHaveProperty('visitorId');
    expect(plain).not.toHaveProperty('sealedResult');
    const client = createIdentifyClient({ baseUrl: srv.url, apiKey: live, validateResponses: true });
    expect((await client.identify(identifyBody(deviceValues(++seed)) as unknown as IdentifyRequest)).visitCount).toBe(1);
  });
});
