// GET /v1/visitors/:visitorId/related over HTTP on the real database, and
// through the typed client: two browsers of one machine are related both
// ways after one visit each from its network; another machine of the home,
// and identical machines of an office image, are not; a deleted visitor
// leaves its relatives' answers; nothing crosses projects or accounts; the
// full event counts them; pages hold.
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServerClient, NotFoundError } from '../../../clients/node/index.js';
import { RELATED_THRESHOLD } from '../../../contract/visitors.js';
import type { Services } from '../../../server/services.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody, inEdge, inFirefox, withNewToken } from '../../support/signals.js';

type V = ReturnType<typeof deviceValues>;

let h: Harness;
let srv: Listening;
let c: Customer;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  srv = await listenApp(h.app);
});
// Each case in an account of its own: related visitors are judged among what the account has seen.
beforeEach(async () => {
  c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

let seed = 70_000;

/** Another machine of the household: another model (GPU, screen, fonts), the same OS, cores and time zone. */
function otherMachine(v: V): V {
  const w = deviceValues(++seed);
  return withNewToken({
    ...w,
    navigator: v.navigator,
    timezone: v.timezone,
    screenResolution: { width: 1280, height: 800 },
    webgl: { ...w.webgl, renderer: 'ANGLE (AMD, AMD Radeon 780M Direct3D11 vs_5_0 ps_5_0, D3D11)' },
  });
}

async function identify(v: V, ip: string, key = live): Promise<{ requestId: string; visitorId: string }> {
  h.clock.advance(60_000);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const related = (visitorId: string, query = '', key = secret) =>
  request(h.app).get(`/v1/visitors/${visitorId}/related${query}`).set('authorization', `Bearer ${key}`);
const ids = (res: request.Response) => (res.body.relatedVisitors as { visitorId: string }[]).map((r) => r.visitorId);

describe('GET /v1/visitors/:visitorId/related', () => {
  it("relates a machine's two browsers both ways after one visit each from its home network", async () => {
    const chrome = deviceValues(++seed);
    const a = await identify(chrome, '81.2.69.10');
    const b = await identify(inFirefox(chrome), '81.2.69.11');
    expect(b.visitorId).not.toBe(a.visitorId);
    const fromA = await related(a.visitorId);
    expect(fromA.status).toBe(200);
    expect(fromA.body).toMatchObject({ visitorId: a.visitorId, threshold: RELATED_THRESHOLD });
    expect(fromA.body.relatedVisitors).toEqual([
      { visitorId: b.visitorId, probability: expect.any(Number), evidence: 'hardware', lastSeenTogetherAt: h.clock.now() - 60_000 },
    ]);
    expect(fromA.body.relatedVisitors[0].probability).toBeGreaterThanOrEqual(RELATED_THRESHOLD);
    expect(fromA.body.paginationKey).toBeUndefined();
    expect(ids(await related(b.visitorId))).toEqual([a.visitorId]);
  });

  it('does not relate another machine of the household, nor a browser on another network', async () => {
    const chrome = deviceValues(++seed);
    const firefox = inFirefox(chrome);
    const a = await identify(chrome, '81.2.69.10');
    const other = await identify(otherMachine(chrome), '81.2.69.12');
    const away = await identify(firefox, '2.125.160.10');
    expect(ids(await related(a.visitorId))).toEqual([]);
    expect(ids(await related(other.visitorId))).toEqual([]);
    expect(ids(await related(away.visitorId))).toEqual([]);
    // Once the Firefox visits from home, the two meet.
    expect((await identify(firefox, '81.2.69.13')).visitorId).toBe(away.visitorId);
    expect(ids(await related(a.visitorId))).toEqual([away.visitorId]);
  });

  it('does not relate identical machines of an office image, however alike', async () => {
    const image = deviceValues(++seed);
    const machines = Array.from({ length: 6 }, () => withNewToken(image));
    // Each first seen at its user's home, then at the office.
    const visitors = [];
    for (const [i, m] of machines.entries()) visitors.push((await identify(m, `81.2.${70 + i}.10`)).visitorId);
    for (const [i, m] of machines.entries()) expect((await identify(m, '203.0.113.20')).visitorId).toBe(visitors[i]);
    expect(new Set(visitors).size).toBe(6);
    for (const v of visitors) expect(ids(await related(v))).toEqual([]);
  });

  it('a deleted visitor leaves its relatives’ answers', async () => {
    const chrome = deviceValues(++seed);
    const a = await identify(chrome, '81.2.69.10');
    const b = await identify(inFirefox(chrome), '81.2.69.10');
    expect(ids(await related(a.visitorId))).toEqual([b.visitorId]);
    expect((await request(h.app).delete(`/v1/visitors/${b.visitorId}`).set('authorization', `Bearer ${secret}`)).status).toBe(202);
    await (h.app.locals.services as Services).deletions.idle();
    expect(ids(await related(a.visitorId))).toEqual([]);
    expect((await related(b.visitorId)).status).toBe(404);
  });

  it('never crosses projects or accounts', async () => {
    const second = (await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Second' })).body.id as string;
    const [secondLive, secondSecret] = [await c.key('live', second), await c.key('secret', second)];
    const chrome = deviceValues(++seed);
    const a = await identify(chrome, '81.2.69.10');
    // The same machine's Firefox on the other project's site: a visitor of the account, but not of this project.
    const b = await identify(inFirefox(chrome), '81.2.69.10', secondLive);
    expect(ids(await related(a.visitorId))).toEqual([]);
    expect(ids(await related(b.visitorId, '', secondSecret))).toEqual([]);
    // The account's visitor asked with the other project's key: it was never seen there.
    expect((await related(a.visitorId, '', secondSecret)).body.relatedVisitors).toEqual([]);
    const stranger = await (await signUp(h)).key('secret');
    expect(await related(a.visitorId, '', stranger)).toMatchObject({ status: 404, body: { code: 'visitor_not_found' } });
  });

  it('the full event counts related visitors in its project', async () => {
    const chrome = deviceValues(++seed);
    const a = await identify(chrome, '81.2.69.10');
    const event = await request(h.app).get(`/v1/events/${a.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(event.body.relatedVisitors).toBe(0);
    await identify(inFirefox(chrome), '81.2.69.10');
    const again = await request(h.app).get(`/v1/events/${a.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(again.body.relatedVisitors).toBe(1);
    // Search results and their events carry no count (it costs reads per event).
    const found = await request(h.app).get(`/v1/events?visitorId=${a.visitorId}`).set('authorization', `Bearer ${secret}`);
    expect(found.body.events[0]).not.toHaveProperty('relatedVisitors');
  });

  it('pages, newest together first, and refuses bad parameters', async () => {
    const chrome = deviceValues(++seed);
    const a = await identify(chrome, '81.2.69.10');
    const b = await identify(inFirefox(chrome), '81.2.69.10');
    // A third browser, seen later.
    const p = await identify(inEdge(chrome), '81.2.69.10');
    // Chrome again: last seen together with Edge after Firefox.
    await identify(chrome, '81.2.69.10');
    const first = await related(a.visitorId, '?limit=1');
    expect(ids(first)).toEqual([p.visitorId]);
    expect(first.body.paginationKey).toEqual(expect.any(String));
    const next = await related(a.visitorId, `?limit=1&paginationKey=${first.body.paginationKey}`);
    expect(ids(next)).toEqual([b.visitorId]);
    expect(next.body.paginationKey).toBeUndefined();
    // A key this endpoint never gave: made up, over 64 characters, another visitor's cursor shape with a bad time.
    for (const q of ['?limit=0', '?limit=51', '?limit=x', '?paginationKey=nope', `?paginationKey=${'a'.repeat(65)}`, '?paginationKey=-1.iq_x']) {
      const res = await related(a.visitorId, q);
      expect(res.status, q).toBe(400);
      expect(res.body.code, q).toBe('validation_failed');
      expect(res.body.error, q).toMatch(/^(limit|paginationKey)/);
    }
    expect(await related('iq_nope')).toMatchObject({ status: 404, body: { code: 'visitor_not_found' } });
    expect((await request(h.app).get(`/v1/visitors/${a.visitorId}/related`).set('authorization', `Bearer ${live}`)).status).toBe(401);
  });

  it('the typed client reads them, page by page', async () => {
    const chrome = deviceValues(++seed);
    const a = await identify(chrome, '81.2.69.10');
    const b = await identify(inFirefox(chrome), '81.2.69.10');
    const p = await identify(inEdge(chrome), '81.2.69.10');
    await identify(chrome, '81.2.69.10');
    const client = createServerClient({ baseUrl: srv.url, secretKey: secret });
    const page = await client.getRelatedVisitors(a.visitorId, { limit: 1 });
    expect(page.relatedVisitors.map((r) => r.visitorId)).toEqual([p.visitorId]);
    const all = [];
    for await (const r of client.relatedVisitors(a.visitorId)) all.push(r.visitorId);
    expect(all).toEqual([p.visitorId, b.visitorId]);
    await expect(client.getRelatedVisitors('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).rejects.toBeInstanceOf(NotFoundError);
  });
});
