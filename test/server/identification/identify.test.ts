// Identify, full events and visit history through HTTP on the real database.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SPEC_SIGNAL_NAMES } from '../../../contract/signals.js';
import { confidenceOf } from '../../../server/identification/confidence.js';
import { IDENTIFY_ATTEMPTS } from '../../../server/identification/service.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { deviceValues, drifted, identifyBody, withoutToken } from '../../support/signals.js';

let h: Harness;
let c: Customer;
let live: string;
let secret: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":1000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
});
afterAll(async () => {
  await h.close();
});

// Each device comes from an address of its own (behind the loopback proxy), as devices do: one per
// audio hash, which the drift below leaves alone. Private addresses: no geolocation to pin.
const addresses = new Map<string, string>();
function addressOf(body: object): string {
  const audio = (body as { signals?: { audio?: { value?: { hash?: string } } } }).signals?.audio?.value?.hash ?? '';
  return addresses.get(audio) ?? addresses.set(audio, `10.2.${Math.floor(addresses.size / 200)}.${(addresses.size % 200) + 10}`).get(audio)!;
}
const identify = (key: string, body: object, ip = addressOf(body)) =>
  request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(body);
const getEvent = (id: string, key = secret) => request(h.app).get(`/v1/events/${id}`).set('authorization', `Bearer ${key}`);
const getVisits = (id: string, query = '', key = secret) => request(h.app).get(`/v1/demo/visits/${id}${query}`).set('x-api-key', key);

let seed = 1000;
const DAY = 86_400_000;
const nextDevice = () => deviceValues(++seed);

describe('POST /v1/identify', () => {
  it('returns the compact result of spec 2.2 and never raw signals', async () => {
    const res = await identify(live, identifyBody(nextDevice()));
    expect(res.status).toBe(200);
    const now = h.clock.now();
    expect(res.body).toEqual({
      requestId: expect.stringMatching(/^req_[0-9A-HJKMNP-TV-Z]{26}$/),
      visitorId: expect.stringMatching(/^iq_[0-9A-HJKMNP-TV-Z]{26}$/),
      highRecallVisitorId: expect.stringMatching(/^iq_[0-9A-HJKMNP-TV-Z]{26}$/),
      confidence: expect.any(Number),
      botProbability: expect.any(Number),
      suspectScore: expect.any(Number),
      visitCount: 1,
      firstSeenAt: now,
      lastSeenAt: now,
      riskFactors: expect.any(Array),
      verdicts: expect.any(Object),
      ip: expect.stringMatching(/^10\.2\.\d+\.\d+$/),
      ipLocation: { country: '', city: '', region: '', latitude: null, longitude: null },
      timestamp: now,
      // Tells this answer from a sealed one (`kind: 'sealed'`).
      kind: 'result',
    });
    // A first visit: the visitor's own high-recall id.
    expect(res.body.highRecallVisitorId).toBe(res.body.visitorId);
    expect(Object.keys(res.body.verdicts).sort()).toEqual([
      'bot',
      'devtools',
      'headless',
      'highActivity',
      'incognito',
      'ipBlocklist',
      'privacyBrowser',
      'proxy',
      'tampering',
      'tor',
      'virtualMachine',
      'vpn',
    ]);
    // A new visitor with every signal and nothing like it seen: its calibrated confidence (confidence.ts).
    expect(res.body.confidence).toBe(confidenceOf({ kind: 'new', p: 1, coverage: 1 }));
    expect(Number.isInteger(res.body.suspectScore)).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain('canvas');
  });

  it('recognises the same device: same visitor, visitCount 2, lastSeenAt = the first visit', async () => {
    const d = nextDevice();
    const first = await identify(live, identifyBody(d));
    h.clock.advance(60_000);
    const second = await identify(live, identifyBody(d));
    expect(second.body.visitorId).toBe(first.body.visitorId);
    expect(second.body.visitCount).toBe(2);
    expect(second.body.firstSeenAt).toBe(first.body.timestamp);
    expect(second.body.lastSeenAt).toBe(first.body.timestamp);
    expect(second.body.timestamp).toBe(first.body.timestamp + 60_000);
  });

  it('recognises a drifted device without its token (browser update, moved taskbar)', async () => {
    const d = nextDevice();
    const first = await identify(live, identifyBody(withoutToken(d)));
    for (let i = 0; i < 3; i++) {
      h.clock.advance(2 * DAY);
      await identify(live, identifyBody(withoutToken(d)));
    }
    h.clock.advance(7 * DAY);
    const again = await identify(live, identifyBody(withoutToken(drifted(d))));
    expect(again.body.visitorId).toBe(first.body.visitorId);
    expect(again.body.confidence).toBeLessThan(first.body.confidence);
  });

  it('recognises the device after storage was cleared (new token)', async () => {
    const d = nextDevice();
    const first = await identify(live, identifyBody(d));
    for (let i = 0; i < 3; i++) {
      h.clock.advance(2 * DAY);
      await identify(live, identifyBody(d));
    }
    h.clock.advance(3_600_000);
    const cleared = { ...d, deviceToken: { token: 'fresh_token_after_clear_0001', storage: 'localStorage' as const, createdAt: 1 } };
    const again = await identify(live, identifyBody(cleared));
    expect(again.body.visitorId).toBe(first.body.visitorId);
  });

  it('tells different devices apart', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await identify(live, identifyBody(nextDevice()))).body.visitorId);
    expect(ids.size).toBe(5);
  });

  it('does not trust a device token presented by a different device', async () => {
    const a = nextDevice();
    const b = nextDevice();
    const ra = await identify(live, identifyBody(a));
    const stolen = await identify(live, identifyBody({ ...b, deviceToken: a.deviceToken }));
    expect(stolen.body.visitorId).not.toBe(ra.body.visitorId);
    // The token still names device A.
    const ra2 = await identify(live, identifyBody(a));
    expect(ra2.body.visitorId).toBe(ra.body.visitorId);
  });

  it('creates one visitor for concurrent first visits of one device', async () => {
    const d = nextDevice();
    const results = await Promise.all(Array.from({ length: 8 }, () => identify(live, identifyBody(d))));
    if (results.some((r) => r.status !== 200))
      console.error(
        h
          .logs()
          .split('\n')
          .filter((l) => l.includes('request failed'))
          .join('\n'),
      );
    expect(results.map((r) => [r.status, r.body.error])).toEqual(results.map(() => [200, undefined]));
    expect(new Set(results.map((r) => r.body.visitorId)).size).toBe(1);
    expect(results.map((r) => r.body.visitCount).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('creates one visitor for simultaneous first visits of one device in two processes, and keeps no visitor of a lost claim', async () => {
    const other = await h.otherProcess();
    h.clock.advance(1_000);
    // One visit per process and device (FerretDB's updates are not atomic across processes: more would lose visits there, cache or not).
    const devices = Array.from({ length: 4 }, () => identifyBody(nextDevice()));
    const send = (app: typeof h.app, body: object) =>
      request(app).post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', addressOf(body)).send(body);
    const results = await Promise.all(devices.map((body) => Promise.all([send(h.app, body), send(other.app, body)])));
    for (const pair of results) {
      expect(pair.map((r) => r.status)).toEqual([200, 200]);
      expect(pair[0].body.visitorId).toBe(pair[1].body.visitorId);
      expect(pair.map((r) => r.body.visitCount).sort()).toEqual([1, 2]);
    }
    // The visitors of the visits that lost their token's claim were deleted: the winners alone were created now.
    const created = await h.store.db.collection('visitors').find({ accountId: c.accountId, firstSeenAt: h.clock.now() }).toArray();
    expect(created.map((v) => [v._id, v.visitCount]).sort()).toEqual(results.map((pair) => [pair[0].body.visitorId, 2]).sort());
  });

  it('identifies again from the database while a first visit loses its token claim, and answers 503 with Retry-After when it loses every time', async () => {
    const identity = h.store.identity;
    const remember = identity.remember.bind(identity);
    // A claim lost as if another first visit of the device had taken the token, `times` times.
    const losing = (times: number) =>
      vi.spyOn(identity, 'remember').mockImplementation(async (...args) => (args[4] !== undefined && times-- > 0 ? false : remember(...args)));
    const visitors = () => h.store.db.collection('visitors').countDocuments({ accountId: c.accountId });
    try {
      losing(IDENTIFY_ATTEMPTS - 1);
      const before = await visitors();
      const won = await identify(live, identifyBody(nextDevice()));
      expect(won.status).toBe(200);
      // The visitors of the lost claims were deleted: one more visitor in all.
      expect(await visitors()).toBe(before + 1);
      vi.restoreAllMocks();

      losing(IDENTIFY_ATTEMPTS);
      const lost = await identify(live, identifyBody(nextDevice()));
      expect(lost.status).toBe(503);
      expect(lost.headers['retry-after']).toBe('1');
      expect(lost.body).toEqual({ error: 'Service temporarily unavailable; retry later', code: 'service_unavailable' });
      expect(await visitors()).toBe(before + 1);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('lowers confidence when many signals failed to collect', async () => {
    const d = nextDevice();
    const few = { navigator: d.navigator, userAgent: d.userAgent, timezone: d.timezone };
    const res = await identify(live, identifyBody(few));
    expect(res.status).toBe(200);
    expect(res.body.confidence).toBeLessThan(0.85);
  });

  it('ignores unknown signal names and names a known signal with a wrong shape in a 400', async () => {
    const d = nextDevice();
    const body = identifyBody(d);
    const ok = await identify(live, { ...body, signals: { ...body.signals, futureSignal: { value: { x: 1 }, duration: 1 } } });
    expect(ok.status).toBe(200);
    const bad = await identify(live, { ...body, signals: { ...body.signals, webgl: { value: { renderer: 42 }, duration: 1 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^signals\.webgl\.value\.renderer: /);
  });

  it.each([
    ['tag over 16 KB', { tag: { big: 'x'.repeat(16 * 1024) } }, /^tag: must serialize to at most 16384 bytes/],
    ['linkedId over 256 characters', { linkedId: 'x'.repeat(257) }, /^linkedId: /],
    ['url over 2,048 characters', { url: 'https://a.example/' + 'x'.repeat(2048) }, /^url: /],
    ['referrer over 2,048 characters', { referrer: 'x'.repeat(2049) }, /^referrer: /],
    ['timestamp missing', { timestamp: undefined }, /^timestamp: Required/],
  ])('rejects %s with 400', async (_what, extra, error) => {
    const res = await identify(live, identifyBody(nextDevice(), extra));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(error);
  });

  it('refuses a secret key on identify', async () => {
    const res = await identify(secret, identifyBody(nextDevice()));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or missing API key', code: expect.any(String) });
  });
});

describe('GET /v1/events/:requestId', () => {
  it('returns the full event of spec 2.3 with unwrapped client signals, server signals and velocity', async () => {
    const d = nextDevice();
    const tag = { 'a.b': 1, $where: 'x', nested: { 'c.d': [1, { $e: null }] } };
    const idr = await identify(live, identifyBody(d, { tag, linkedId: 'order-42', referrer: 'https://ref.example/' }));
    const res = await getEvent(idr.body.requestId);
    expect(res.status).toBe(200);
    const e = res.body;
    expect(e).toMatchObject({
      requestId: idr.body.requestId,
      visitorId: idr.body.visitorId,
      confidence: idr.body.confidence,
      botProbability: idr.body.botProbability,
      suspectScore: idr.body.suspectScore,
      linkedId: 'order-42',
      tag,
      suspect: false,
      ip: idr.body.ip,
      url: 'https://shop.example.com/checkout',
      referrer: 'https://ref.example/',
      timestamp: idr.body.timestamp,
      createdAt: new Date(idr.body.timestamp).toISOString(),
    });
    expect(e.tag).toEqual(tag);
    expect(Object.keys(e.signals.client).sort()).toEqual([...SPEC_SIGNAL_NAMES].sort());
    expect(e.signals.client.canvas).toEqual(d.canvas);
    expect(e.signals.client.navigator).toEqual(d.navigator);
    expect(Object.keys(e.signals.server).sort()).toEqual(['asn', 'consistency', 'geo', 'http', 'ipNetwork', 'tls', 'vpnDetection']);
    expect(e.verdicts.velocity).toEqual({
      distinctIp: { '5m': 1, '1h': 1, '24h': 1 },
      distinctCountry: { '5m': 0, '1h': 0, '24h': 0 },
      events: { '5m': 1, '1h': 1, '24h': 1 },
    });
  });

  it('omits linkedId and tag when they were not set', async () => {
    const idr = await identify(live, identifyBody(nextDevice()));
    const e = (await getEvent(idr.body.requestId)).body;
    expect(e).not.toHaveProperty('linkedId');
    expect(e).not.toHaveProperty('tag');
  });

  it("answers 404 'Event not found' for unknown ids and for another account's events", async () => {
    const idr = await identify(live, identifyBody(nextDevice()));
    const other = await signUp(h);
    const otherSecret = await other.key('secret');
    for (const res of [await getEvent('req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'), await getEvent('nonsense'), await getEvent(idr.body.requestId, otherSecret)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Event not found', code: expect.any(String) });
    }
  });

  it('requires a secret key, as Bearer or in X-API-Key (Bearer wins when both are sent)', async () => {
    const idr = await identify(live, identifyBody(nextDevice()));
    expect((await request(h.app).get(`/v1/events/${idr.body.requestId}`)).status).toBe(401);
    expect((await getEvent(idr.body.requestId, live)).status).toBe(401);
    const viaHeader = await request(h.app).get(`/v1/events/${idr.body.requestId}`).set('x-api-key', secret);
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body.requestId).toBe(idr.body.requestId);
    const liveInHeader = await request(h.app).get(`/v1/events/${idr.body.requestId}`).set('x-api-key', live);
    expect([liveInHeader.status, liveInHeader.body]).toEqual([401, { error: 'Invalid or missing secret key', code: 'invalid_secret_key' }]);
    const both = await request(h.app).get(`/v1/events/${idr.body.requestId}`).set('authorization', `Bearer ${live}`).set('x-api-key', secret);
    expect(both.status).toBe(401);
  });

  it('updates suspect, linkedId and tag, and finds events by linkedId newest first', async () => {
    const d = nextDevice();
    const a = await identify(live, identifyBody(d, { linkedId: 'user-7' }));
    h.clock.advance(1000);
    const b = await identify(live, identifyBody(d, { linkedId: 'user-7' }));
    const found = await request(h.app).get('/v1/events?linkedId=user-7').set('authorization', `Bearer ${secret}`);
    expect(found.status).toBe(200);
    expect(found.body.events.map((e: { requestId: string }) => e.requestId)).toEqual([b.body.requestId, a.body.requestId]);

    const patched = await request(h.app)
      .patch(`/v1/events/${a.body.requestId}`)
      .set('authorization', `Bearer ${secret}`)
      .send({ suspect: true, linkedId: 'user-8', tag: { 'x.y': true } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ suspect: true, linkedId: 'user-8', tag: { 'x.y': true } });
    expect((await getEvent(a.body.requestId)).body).toMatchObject({ suspect: true, linkedId: 'user-8', tag: { 'x.y': true } });
    const moved = await request(h.app).get('/v1/events?linkedId=user-7').set('authorization', `Bearer ${secret}`);
    expect(moved.body.events.map((e: { requestId: string }) => e.requestId)).toEqual([b.body.requestId]);

    const cleared = await request(h.app).patch(`/v1/events/${a.body.requestId}`).set('authorization', `Bearer ${secret}`).send({ linkedId: null, tag: null });
    expect(cleared.body).not.toHaveProperty('linkedId');
    expect(cleared.body).not.toHaveProperty('tag');
    const empty = await request(h.app).patch(`/v1/events/${a.body.requestId}`).set('authorization', `Bearer ${secret}`).send({});
    expect(empty.status).toBe(400);
  });
});

describe('GET /v1/demo/visits/:visitorId', () => {
  it('returns the 20 newest visits newest first, totalVisits and firstSeenAt; older pages by cursor', async () => {
    const d = nextDevice();
    const ids: string[] = [];
    let visitorId = '';
    let firstAt = 0;
    for (let i = 0; i < 23; i++) {
      const r = await identify(live, identifyBody(d));
      visitorId = r.body.visitorId;
      if (i === 0) firstAt = r.body.timestamp;
      ids.push(r.body.requestId);
      h.clock.advance(1000);
    }
    const res = await getVisits(visitorId);
    expect(res.status).toBe(200);
    expect(res.body.totalVisits).toBe(23);
    expect(res.body.firstSeenAt).toBe(firstAt);
    expect(res.body.visits).toHaveLength(20);
    const ts = res.body.visits.map((v: { timestamp: number }) => v.timestamp);
    expect(ts).toEqual([...ts].sort((a, b) => b - a));
    const v0 = res.body.visits[0];
    expect(v0).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      timestamp: firstAt + 22_000,
      country: '',
      city: '',
      region: '',
      asn: null,
      asnOrg: '',
      asnCategory: 'UNKNOWN',
      botProbability: expect.any(Number),
      confidence: expect.any(Number),
      riskFactors: expect.any(Array),
      signals: { client: expect.any(Object), server: expect.any(Object) },
    });
    expect(v0.signals.client.canvas).toEqual(d.canvas);

    const last = res.body.visits[19];
    const older = await getVisits(visitorId, `?before=${last.id}`);
    expect(older.status).toBe(200);
    expect(older.body.visits.map((v: { timestamp: number }) => v.timestamp)).toEqual([firstAt + 2000, firstAt + 1000, firstAt]);
    const byTime = await getVisits(visitorId, `?before=${firstAt + 1500}`);
    expect(byTime.body.visits.map((v: { timestamp: number }) => v.timestamp)).toEqual([firstAt + 1000, firstAt]);
    const bad = await getVisits(visitorId, '?before=not-a-cursor');
    expect(bad.status).toBe(400);

    // The paging convention of event search: a full page carries paginationKey, the same cursor as `before`.
    expect(res.body.paginationKey).toBe(last.id);
    const next = await getVisits(visitorId, `?paginationKey=${res.body.paginationKey}`);
    expect(next.body).toEqual({ ...older.body });
    expect(next.body.paginationKey).toBeUndefined();
    const both = await getVisits(visitorId, `?paginationKey=${last.id}&before=${last.id}`);
    expect([both.status, both.body.error]).toEqual([400, 'before: give either before or paginationKey']);
    // A secret key is taken in Authorization: Bearer as well as in X-API-Key.
    const bearer = await request(h.app).get(`/v1/demo/visits/${visitorId}`).set('authorization', `Bearer ${secret}`);
    expect(bearer.body).toEqual(res.body);
  });

  it("answers 404 for unknown visitors and another account's visitors; 401 without a secret key", async () => {
    const r = await identify(live, identifyBody(nextDevice()));
    const other = await signUp(h);
    const otherSecret = await other.key('secret');
    for (const res of [await getVisits('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'), await getVisits(r.body.visitorId, '', otherSecret)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Visitor not found', code: expect.any(String) });
    }
    expect((await getVisits(r.body.visitorId, '', live)).status).toBe(401);
  });
});

describe('isolation of matching between accounts', () => {
  it('gives the same device different visitors in different accounts', async () => {
    const d = nextDevice();
    const other = await signUp(h);
    const otherLive = await other.key('live');
    const mine = await identify(live, identifyBody(d));
    const theirs = await identify(otherLive, identifyBody(d));
    expect(theirs.status).toBe(200);
    expect(theirs.body.visitorId).not.toBe(mine.body.visitorId);
    expect(theirs.body.visitCount).toBe(1);
  });
});
