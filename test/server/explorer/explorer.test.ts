// The dashboard's events explorer and visitor timeline over HTTP (session
// cookie): a project's events newest first as summaries, each filter,
// pagination, bad filters, another account's project or visitor answered
// exactly like a missing one, no session, deleting a visitor's data, and
// reads that cross-site pages cannot make with the cookie or read.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSummary, VisitSummary } from '../../../server/explorer/views.js';
import { browserOf } from '../../../server/explorer/views.js';
import type { Services } from '../../../server/services.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const HOUR = 3600_000;
const t0 = Date.UTC(2026, 0, 15, 12);

let h: Harness;
let c: Customer;
let other: Customer;
let live: string;
let secret: string;
let secondProject: string;
let secondLive: string;
const ids: Record<string, { requestId: string; visitorId: string }> = {};

type V = ReturnType<typeof deviceValues>;
const headless = (v: V): V => ({ ...v, automation: { ...v.automation, webdriver: true, headlessUserAgent: true } });
const googlebot = (v: V): V => ({
  ...v,
  userAgent: { ...v.userAgent, userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/130.0.0.0 Safari/537.36' },
});

async function identify(name: string, key: string, ip: string, v: V, at: number, extra: Record<string, unknown> = {}) {
  h.clock.set(at);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(identifyBody(v, extra));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  ids[name] = res.body;
}

const events = (query = '', projectId = c.projectId, who: Customer = c) => who.agent.get(`/api/projects/${projectId}/events${query ? `?${query}` : ''}`);
const listed = async (query = '', projectId = c.projectId) => {
  const res = await events(query, projectId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.events as EventSummary[]).map((e) => e.requestId);
};
const req = (...names: string[]) => names.map((n) => ids[n]!.requestId);

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  const project = await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Second' });
  secondProject = project.body.id;
  secondLive = await c.key('live', secondProject);
  other = await signUp(h);

  const a = deviceValues(801);
  await identify('a1', live, '8.8.8.8', a, t0);
  await identify('a2', live, '8.8.8.8', a, t0 + HOUR, { linkedId: 'user-1' });
  await identify('b', live, '86.8.23.155', deviceValues(802), t0 + 2 * HOUR, { linkedId: 'user-1' });
  await identify('bad', live, '8.9.10.11', headless(deviceValues(803)), t0 + 3 * HOUR);
  await identify('good', live, '66.249.66.1', googlebot(deviceValues(804)), t0 + 4 * HOUR);
  // The same device in the account's second project: one visitor, listed under that project only.
  await identify('second', secondLive, '8.8.8.8', a, t0 + 5 * HOUR);
  await identify('other', await other.key('live'), '8.8.8.8', deviceValues(805), t0 + 6 * HOUR, { linkedId: 'user-1' });
  const flagged = await request(h.app).patch(`/v1/events/${ids.b!.requestId}`).set('authorization', `Bearer ${secret}`).send({ suspect: true });
  expect(flagged.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h.close();
});

describe('GET /api/projects/:projectId/events', () => {
  it("lists the project's events newest first as summaries, and no other project's or account's", async () => {
    const res = await events();
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.paginationKey).toBeUndefined();
    const list = res.body.events as EventSummary[];
    expect(list.map((e) => e.requestId)).toEqual(req('good', 'bad', 'b', 'a2', 'a1'));
    expect(list.find((e) => e.requestId === ids.b!.requestId)).toEqual({
      requestId: ids.b!.requestId,
      visitorId: ids.b!.visitorId,
      timestamp: t0 + 2 * HOUR,
      ip: '86.8.23.155',
      country: 'GB',
      city: expect.any(String),
      browser: 'Chrome 130 on Windows',
      bot: 'none',
      botProbability: expect.any(Number),
      suspect: true,
      suspectScore: expect.any(Number),
      confidence: expect.any(Number),
      linkedId: 'user-1',
      url: 'https://shop.example.com/checkout',
    });
    expect(list.find((e) => e.requestId === ids.a1!.requestId)).not.toHaveProperty('linkedId');
    expect(list.find((e) => e.requestId === ids.bad!.requestId)?.bot).toBe('bad');
    expect(list.find((e) => e.requestId === ids.good!.requestId)?.bot).toBe('good');
    expect(await listed('', secondProject)).toEqual(req('second'));
  });

  it('filters by visitor (the whole device), linkedId, bot and suspect, alone and combined', async () => {
    expect(await listed(`visitorId=${ids.a1!.visitorId}`)).toEqual(req('a2', 'a1'));
    expect(await listed(`visitorId=${ids.a1!.visitorId}`, secondProject)).toEqual(req('second'));
    expect(await listed('linkedId=user-1')).toEqual(req('b', 'a2'));
    expect(await listed('bot=bad')).toEqual(req('bad'));
    expect(await listed('bot=good')).toEqual(req('good'));
    expect(await listed('bot=all')).toEqual(req('good', 'bad'));
    expect(await listed('bot=none')).toEqual(req('b', 'a2', 'a1'));
    expect(await listed('suspect=true')).toEqual(req('b'));
    expect(await listed('suspect=false')).toEqual(req('good', 'bad', 'a2', 'a1'));
    expect(await listed(`linkedId=user-1&suspect=false&visitorId=${ids.a1!.visitorId}`)).toEqual(req('a2'));
    expect(await listed('linkedId=nobody')).toEqual([]);
    // The other filters of GET /v1/events, with the same meaning.
    expect(await listed('ip=8.8.8.0/24&country=us')).toEqual(req('a2', 'a1'));
    expect(await listed(`start=${t0 + HOUR}&end=${t0 + 2 * HOUR}`)).toEqual(req('b', 'a2'));
    expect(await listed('reverse=true')).toEqual(req('a1', 'a2', 'b', 'bad', 'good'));
    expect(await listed('minSuspectScore=0&tampering=false&virtualMachine=false&tor=false')).toEqual(req('good', 'bad', 'b', 'a2', 'a1'));
    expect(await listed('minSuspectScore=100')).toEqual([]);
    // An unknown visitor, or another account's, finds nothing.
    expect(await listed(`visitorId=${ids.other!.visitorId}`)).toEqual([]);
    expect(await listed('visitorId=iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).toEqual([]);
  });

  it('pages with limit and paginationKey, newest first without repeats', async () => {
    const first = await events('limit=2');
    expect(first.status).toBe(200);
    expect(first.body.events.map((e: EventSummary) => e.requestId)).toEqual(req('good', 'bad'));
    expect(first.body.paginationKey).toEqual(expect.any(String));
    const second = await events(`limit=2&paginationKey=${first.body.paginationKey}`);
    expect(second.body.events.map((e: EventSummary) => e.requestId)).toEqual(req('b', 'a2'));
    const third = await events(`limit=2&paginationKey=${second.body.paginationKey}`);
    expect(third.body.events.map((e: EventSummary) => e.requestId)).toEqual(req('a1'));
    expect(third.body.paginationKey).toBeUndefined();
    // With a filter, the key carries on with the same filter.
    const bots = await events('bot=all&limit=1');
    const more = await events(`bot=all&limit=1&paginationKey=${bots.body.paginationKey}`);
    expect([...bots.body.events, ...more.body.events].map((e: EventSummary) => e.requestId)).toEqual(req('good', 'bad'));
  });

  it('finds entries written before they recorded their project, in their own project only', async () => {
    await h.store.eventIndex.col.updateMany({ r: ids.second!.requestId }, { $unset: { p: '' } });
    try {
      expect(await listed('', secondProject)).toEqual(req('second'));
      expect(await listed(`visitorId=${ids.a1!.visitorId}`)).toEqual(req('a2', 'a1'));
      expect(await listed()).not.toContain(ids.second!.requestId);
    } finally {
      await h.store.eventIndex.col.updateMany({ r: ids.second!.requestId }, { $set: { p: secondProject } });
    }
  });

  it('answers 400 naming the filter for bad values and unknown parameters', async () => {
    const cases: Array<[string, RegExp]> = [
      ['visitorId=nope', /^visitorId: must be iq_ followed by a ULID/],
      ['bot=maybe', /^bot: /],
      ['suspect=yes', /^suspect: /],
      ['limit=0', /^limit: /],
      ['limit=101', /^limit: /],
      ['linkedId=', /^linkedId: /],
      ['ip=nope', /^ip: /],
      ['country=DEU', /^country: /],
      ['minSuspectScore=101', /^minSuspectScore: /],
      ['vpn=maybe', /^vpn: /],
      ['colour=red', /colour/],
      ['paginationKey=nope', /^paginationKey: not a key this endpoint returned$/],
    ];
    for (const [query, message] of cases) {
      const res = await events(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatch(message);
      expect(res.body.code, query).toBe('validation_failed');
    }
  });

  it("answers 404 for another account's project exactly as for a missing one", async () => {
    const theirs = await events('', other.projectId);
    const missing = await events('', 'prj_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z');
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(theirs.body);
    // Their own project, for them.
    expect((await events('', other.projectId, other)).body.events.map((e: EventSummary) => e.requestId)).toEqual(req('other'));
  });

  it('answers 401 without a session, and 401 with a key instead of one', async () => {
    for (const res of [
      await request(h.app).get(`/api/projects/${c.projectId}/events`),
      await request(h.app).get(`/api/projects/${c.projectId}/events`).set('authorization', `Bearer ${secret}`),
      await request(h.app).get(`/api/projects/${c.projectId}/events`).set('cookie', 'deviceid_session=forged'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Not signed in', code: 'not_signed_in' });
    }
  });
});

describe('GET /api/visitors/:visitorId', () => {
  it("shows the device's visits in every project, newest first, with where, what browser and how sure", async () => {
    const res = await c.agent.get(`/api/visitors/${ids.a1!.visitorId}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ visitorId: ids.a1!.visitorId, mergedFrom: [], totalVisits: 3, firstSeenAt: t0 });
    expect(res.body).not.toHaveProperty('nextBefore');
    const visits = res.body.visits as VisitSummary[];
    expect(visits.map((v) => v.timestamp)).toEqual([t0 + 5 * HOUR, t0 + HOUR, t0]);
    expect(visits[0]).toEqual({
      id: expect.any(String),
      timestamp: t0 + 5 * HOUR,
      country: 'US',
      city: expect.any(String),
      region: expect.any(String),
      network: expect.stringMatching(/google/i),
      browser: 'Chrome 130 on Windows',
      confidence: expect.any(Number),
      botProbability: expect.any(Number),
      riskFactors: expect.any(Array),
    });
  });

  it('pages 20 visits at a time with nextBefore', async () => {
    const v = deviceValues(806);
    for (let i = 0; i < 22; i++) await identify(`many${i}`, live, '86.8.23.155', v, t0 + 10 * HOUR + i * 60_000);
    const visitorId = ids.many0!.visitorId;
    const first = await c.agent.get(`/api/visitors/${visitorId}`);
    expect(first.body.visits).toHaveLength(20);
    expect(first.body.totalVisits).toBe(22);
    expect(first.body.visits[0].timestamp).toBe(t0 + 10 * HOUR + 21 * 60_000);
    expect(first.body.nextBefore).toBe(first.body.visits[19].id);
    const second = await c.agent.get(`/api/visitors/${visitorId}?before=${first.body.nextBefore}`);
    expect(second.status).toBe(200);
    expect(second.body.visits.map((x: VisitSummary) => x.timestamp)).toEqual([t0 + 10 * HOUR + 60_000, t0 + 10 * HOUR]);
    expect(second.body).not.toHaveProperty('nextBefore');
  }, 60_000);

  it("answers 404 for another account's visitor exactly as for a missing one, 400 for a bad cursor, 401 without a session", async () => {
    const theirs = await c.agent.get(`/api/visitors/${ids.other!.visitorId}`);
    const missing = await c.agent.get('/api/visitors/iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z');
    const malformed = await c.agent.get('/api/visitors/nope');
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ error: 'Visitor not found', code: 'visitor_not_found' });
    expect(missing.body).toEqual(theirs.body);
    expect(malformed.status).toBe(404);
    expect(malformed.body).toEqual(theirs.body);
    expect((await other.agent.get(`/api/visitors/${ids.other!.visitorId}`)).status).toBe(200);

    const cursor = await c.agent.get(`/api/visitors/${ids.a1!.visitorId}?before=nope`);
    expect(cursor.status).toBe(400);
    expect(cursor.body).toEqual({ error: 'before: must be a visit id of this visitor or a Unix ms timestamp', code: 'invalid_cursor' });
    const unknown = await c.agent.get(`/api/visitors/${ids.a1!.visitorId}?limit=5`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/limit/);

    const anonymous = await request(h.app).get(`/api/visitors/${ids.a1!.visitorId}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: 'Not signed in', code: 'not_signed_in' });
  });
});

describe('DELETE /api/visitors/:visitorId', () => {
  it("deletes the device's data with the session, from this origin only; another account's visitor is 404", async () => {
    const visitorId = ids.b!.visitorId;
    expect((await c.agent.delete(`/api/visitors/${ids.other!.visitorId}`).set('origin', c.origin)).status).toBe(404);
    const crossSite = await c.agent.delete(`/api/visitors/${visitorId}`).set('origin', 'https://evil.example');
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.code).toBe('cross_site_request');
    expect((await request(h.app).delete(`/api/visitors/${visitorId}`).set('origin', c.origin)).status).toBe(401);

    const res = await c.agent.delete(`/api/visitors/${visitorId}`).set('origin', c.origin);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ deletionId: expect.stringMatching(/^del_/), visitorId, status: expect.any(String) });
    await (h.app.locals.services as Services).deletions.idle();
    expect((await c.agent.get(`/api/visitors/${visitorId}`)).status).toBe(404);
    expect(await listed('linkedId=user-1')).toEqual(req('a2'));
  });
});

describe('cross-site', () => {
  it('reads change nothing (no CSRF token to check); another origin gets no CORS grant to read them, and the cookie is SameSite=Lax', async () => {
    for (const path of [`/api/projects/${c.projectId}/events`, `/api/visitors/${ids.a1!.visitorId}`]) {
      const res = await c.agent.get(path).set('origin', 'https://evil.example');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await request(h.app).options(path).set('origin', 'https://evil.example').set('access-control-request-method', 'GET');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
    // A cross-site fetch or form does not carry the session cookie in the first place.
    const fresh = await request(h.app)
      .post('/api/auth/signup')
      .set('origin', c.origin)
      .send({ email: `samesite-${Date.now()}@example.com`, password: 'correct horse battery' });
    expect(String(fresh.headers['set-cookie'])).toMatch(/SameSite=Lax/i);
  });
});

describe('browserOf', () => {
  it('names the browser and system of common User-Agents, and tools by their product', () => {
    expect(browserOf('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36')).toBe(
      'Chrome 130 on Windows',
    );
    expect(browserOf('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.2849.68')).toBe(
      'Edge 130 on Windows',
    );
    expect(browserOf('Mozilla/5.0 (Macintosh; Intel Mac OS X 14.6; rv:131.0) Gecko/20100101 Firefox/131.0')).toBe('Firefox 131 on macOS');
    expect(
      browserOf('Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1'),
    ).toBe('Safari 17 on iOS 17');
    expect(browserOf('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36')).toBe(
      'Chrome 130 on Android 14',
    );
    expect(browserOf('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36')).toBe(
      'Headless Chrome 131 on Linux',
    );
    expect(browserOf('curl/8.5.0')).toBe('curl 8.5.0');
    expect(browserOf('')).toBe('Unknown');
  });
});
