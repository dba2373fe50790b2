// Security audit 4, findings F2, F3 and F7, as attacks over real HTTP on the
// real database: nobody gets a victim's visitorId by copying what the victim's
// browser holds or sends (its agent token, its device cookie, its signals, the
// linkedId its page sends), and a browser whose storage is blocked is not
// counted against for cookies it never kept.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signLinkedId } from '@deviceid/client';
import { DEVICE_COOKIE, PROXY_HEADERS } from '../../../contract/proxy.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, withNewToken, withoutToken } from '../../support/signals.js';

let h: Harness;
let shop: Customer;
let live: string;
let secret: string;
let proxySecret: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  shop = await signUp(h);
  [live, secret] = [await shop.key('live'), await shop.key('secret')];
  const res = await shop.agent.post(`/api/projects/${shop.projectId}/proxy/secret`).set('origin', shop.origin).send({});
  expect(res.status).toBe(201);
  proxySecret = res.body.secret;
});
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HOME = '81.2.69.40';
const AWAY = '2.125.160.90';
let seed = 77_000;
const VICTIMS = 6;

interface Answer {
  visitorId: string;
  requestId: string;
  confidence: number;
  verdicts: { tampering: { result: boolean } };
}

async function identify(body: object, ip = HOME, advance = DAY, key = live): Promise<Answer> {
  h.clock.advance(advance);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** An identify as a first-party proxy forwards it, with the browser's cookie header when it has one. */
async function proxied(body: object, cookie: string | null, o: { ip?: string; linkedId?: string } = {}) {
  h.clock.advance(DAY);
  const r = request(h.app)
    .post('/v1/identify')
    .set('x-api-key', live)
    .set('origin', 'https://shop.example.com')
    .set(PROXY_HEADERS.secret, proxySecret)
    .set(PROXY_HEADERS.clientIp, o.ip ?? HOME)
    .set(PROXY_HEADERS.host, 'shop.example.com')
    .set(PROXY_HEADERS.proto, 'https');
  if (o.linkedId !== undefined) r.set(PROXY_HEADERS.linkedId, o.linkedId);
  if (cookie) r.set('cookie', cookie);
  const res = await r.send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const line = (res.headers['set-cookie'] as unknown as string[] | undefined)?.find((l) => l.startsWith(`${DEVICE_COOKIE}=`));
  return { body: res.body as Answer, cookie: line ? line.split(';')[0]! : cookie };
}

/** A victim with a few visits from home: its signals, token and visitorId. */
async function victim(linkedId?: string) {
  const v = withNewToken(deviceValues(++seed));
  const first = await identify(identifyBody(v, linkedId ? { linkedId } : {}));
  for (let i = 0; i < 2; i++) expect((await identify(identifyBody(v, linkedId ? { linkedId } : {}))).visitorId).toBe(first.visitorId);
  return { v, visitorId: first.visitorId };
}

/** What survives when most of collection failed: the few signals a script blocked half-way still sends. */
const sparse = (v: V): Partial<V> => ({
  navigator: v.navigator,
  userAgent: v.userAgent,
  timezone: v.timezone,
  screenResolution: v.screenResolution,
  storage: v.storage,
  cookiesEnabled: v.cookiesEnabled,
  deviceToken: v.deviceToken,
});

describe('a copied agent token is believed only with the signals of its device (F2)', () => {
  it('with no other signal: never the victim’s visitorId, low confidence, marked as tampering', async () => {
    for (let i = 0; i < VICTIMS; i++) {
      const { v, visitorId } = await victim();
      const a = await identify(identifyBody({ deviceToken: v.deviceToken }), AWAY);
      expect(a.visitorId).not.toBe(visitorId);
      expect(a.confidence).toBeLessThan(0.5);
      expect(a.verdicts.tampering.result).toBe(true);
    }
  });

  it('with a sparse body copied from the victim, or from another device: never the victim’s', async () => {
    for (let i = 0; i < VICTIMS; i++) {
      const { v, visitorId } = await victim();
      expect((await identify(identifyBody(sparse(v)), AWAY)).visitorId).not.toBe(visitorId);
      const other = deviceValues(++seed);
      expect((await identify(identifyBody(sparse({ ...other, deviceToken: v.deviceToken })), AWAY)).visitorId).not.toBe(visitorId);
    }
  });

  it('after an empty visit with the token, another device’s full signals with it are still not the victim', async () => {
    for (let i = 0; i < VICTIMS; i++) {
      const { v, visitorId } = await victim();
      await identify(identifyBody({ deviceToken: v.deviceToken }), AWAY);
      await identify(identifyBody({}), AWAY);
      // Another device: not a chance look-alike of the victim (its own time zone), as the audit's were.
      const other = {
        ...deviceValues(++seed),
        timezone: { name: v.timezone.name === 'Asia/Tokyo' ? 'Europe/Paris' : 'Asia/Tokyo', offset: 0 },
        deviceToken: v.deviceToken,
      };
      for (let k = 0; k < 3; k++) expect((await identify(identifyBody(other), AWAY)).visitorId, `visit ${k} of victim ${i}`).not.toBe(visitorId);
    }
  });

  it('the victim itself is still recognised by its token afterwards, at high confidence', async () => {
    const { v, visitorId } = await victim();
    await identify(identifyBody({ deviceToken: v.deviceToken }), AWAY);
    const back = await identify(identifyBody(v));
    expect(back.visitorId).toBe(visitorId);
    expect(back.confidence).toBeGreaterThan(0.9);
    expect(back.verdicts.tampering.result).toBe(false);
  });
});

describe('a replayed device cookie is believed only with the signals of its device (F2)', () => {
  it('through the proxy with signals {}: never the victim’s visitorId', async () => {
    for (let i = 0; i < VICTIMS; i++) {
      const v = withoutToken(deviceValues(++seed));
      const first = await proxied(identifyBody(v), null);
      const again = await proxied(identifyBody(v), first.cookie);
      expect(again.body.visitorId).toBe(first.body.visitorId);
      const replay = await proxied(identifyBody({}), first.cookie, { ip: AWAY });
      expect(replay.body.visitorId).not.toBe(first.body.visitorId);
      expect(replay.body.verdicts.tampering.result).toBe(true);
      // Nor afterwards with another device's signals.
      const other = await proxied(identifyBody(withoutToken(deviceValues(++seed))), first.cookie, { ip: AWAY });
      expect(other.body.visitorId).not.toBe(first.body.visitorId);
    }
  });
});

describe('a linkedId the browser sends is a tag, never evidence (F3)', () => {
  /** The victim signed in at home; then from a new network, a look-alike of its device (or its exact signals replayed) with its linkedId. */
  it('a look-alike or a replay of the victim’s signals from a new network with the victim’s linkedId is not the victim', async () => {
    for (let i = 0; i < VICTIMS; i++) {
      const linkedId = `victim-${i}-${seed}@example.com`;
      const { v, visitorId } = await victim(linkedId);
      const lookalike = withNewToken({ ...v, screenFrame: { ...v.screenFrame, bottom: 48 }, domBlockers: { hidden: ['ads'], probed: 12 } });
      expect((await identify(identifyBody(lookalike, { linkedId }), AWAY)).visitorId).not.toBe(visitorId);
      expect((await identify(identifyBody(withNewToken(v), { linkedId }), `2.125.161.${10 + i}`)).visitorId).not.toBe(visitorId);
    }
  });

  it('stays on the event and is found by event search', async () => {
    const { v } = await victim('tagged@example.com');
    const a = await identify(identifyBody(v, { linkedId: 'tagged@example.com' }));
    const ev = await request(h.app).get(`/v1/events/${a.requestId}`).set('x-api-key', secret);
    expect(ev.body.linkedId).toBe('tagged@example.com');
    const found = await request(h.app).get('/v1/events').query({ linkedId: 'tagged@example.com' }).set('x-api-key', secret);
    expect(found.body.events.map((e: { requestId: string }) => e.requestId)).toContain(a.requestId);
  });

  it('a linkedId the proxy confirms from the site’s own session finds the device that lost its storage on a new network', async () => {
    const linkedId = `confirmed-${seed}@example.com`;
    const v = withNewToken(deviceValues(++seed));
    const first = await proxied(identifyBody(v), null, { linkedId });
    let cookie = first.cookie;
    for (let i = 0; i < 3; i++) {
      const r = await proxied(identifyBody(v), cookie, { linkedId });
      expect(r.body.visitorId).toBe(first.body.visitorId);
      cookie = r.cookie;
    }
    // Storage and cookies gone, a network never used: the confirmed linkedId brings it home.
    const away = await proxied(identifyBody(withNewToken(v)), null, { linkedId, ip: AWAY });
    expect(away.body.visitorId).toBe(first.body.visitorId);
  });
});

describe('a linkedId the site’s server signs with the project’s linkedId key is evidence; without a valid proof it is a tag (F3)', () => {
  // A customer of its own, whose session outlives these tests' clock (an hour between visits).
  let signer: Customer;
  let signerLive: string;
  beforeAll(async () => {
    signer = await signUp(h);
    signerLive = await signer.key('live');
  });
  const route = () => `/api/projects/${signer.projectId}/linked-id-key`;
  const visit = (body: object, ip = HOME) => identify(body, ip, HOUR, signerLive);

  it('is off until created; created, the key is shown once; revoked, it is off again (and never handed out twice)', async () => {
    expect((await signer.agent.get(route())).body).toEqual({ enabled: false, since: null });
    const created = await signer.agent.post(route()).set('origin', signer.origin).send({});
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ enabled: true, key: expect.stringMatching(/^lid_[\w-]{43}$/) });
    expect((await signer.agent.get(route())).body).toEqual({ enabled: true, since: created.body.since });
    const revoked = await signer.agent.delete(route()).set('origin', signer.origin);
    expect(revoked.body).toEqual({ enabled: false, since: null });
    const again = await signer.agent.post(route()).set('origin', signer.origin).send({});
    expect(again.body.key).not.toBe(created.body.key);
    expect((await signer.agent.post(route()).send({})).status).toBe(403);
  });

  it('finds the device that lost its storage on a new network by a signed linkedId; an expired, foreign, revoked or other user’s proof is no evidence', async () => {
    const key = (await signer.agent.post(route()).set('origin', signer.origin).send({})).body.key as string;
    const now = () => h.clock.now() + HOUR;
    const lost = async (linkedId: string, proof: (d: V) => string) => {
      const d = withNewToken(deviceValues(++seed));
      const home = await visit(identifyBody(d, { linkedId, linkedIdProof: signLinkedId(key, linkedId, { now: now() }) }));
      for (let i = 0; i < 3; i++) await visit(identifyBody(d, { linkedId, linkedIdProof: signLinkedId(key, linkedId, { now: now() }) }));
      const away = await visit(identifyBody(withNewToken(d), { linkedId, linkedIdProof: proof(d) }), AWAY);
      return away.visitorId === home.visitorId;
    };
    expect(await lost('signed-1@example.com', () => signLinkedId(key, 'signed-1@example.com', { now: now() }))).toBe(true);
    // Expired by the time it arrives.
    expect(await lost('signed-2@example.com', () => signLinkedId(key, 'signed-2@example.com', { now: now() - DAY, ttlSeconds: 60 }))).toBe(false);
    // Another user's proof, and another project's key.
    expect(await lost('signed-3@example.com', () => signLinkedId(key, 'someone-else@example.com', { now: now() }))).toBe(false);
    const foreign = `lid_${'A'.repeat(43)}`;
    expect(await lost('signed-4@example.com', () => signLinkedId(foreign, 'signed-4@example.com', { now: now() }))).toBe(false);
    // Malformed.
    expect(await lost('signed-5@example.com', () => 'v1.99999999999.nope')).toBe(false);
    // The key revoked: its proofs are no longer believed.
    const d = withNewToken(deviceValues(++seed));
    const linkedId = 'signed-6@example.com';
    const home = await visit(identifyBody(d, { linkedId, linkedIdProof: signLinkedId(key, linkedId, { now: now() }) }));
    for (let i = 0; i < 3; i++) await visit(identifyBody(d, { linkedId, linkedIdProof: signLinkedId(key, linkedId, { now: now() }) }));
    await signer.agent.delete(route()).set('origin', signer.origin);
    const away = await visit(identifyBody(withNewToken(d), { linkedId, linkedIdProof: signLinkedId(key, linkedId, { now: now() }) }), AWAY);
    expect(away.visitorId).not.toBe(home.visitorId);
  });

  it('refuses a proof longer than 200 characters with 400 naming the field', async () => {
    const res = await request(h.app)
      .post('/v1/identify')
      .set('x-api-key', live)
      .send(identifyBody(deviceValues(++seed), { linkedId: 'a', linkedIdProof: 'x'.repeat(201) }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/linkedIdProof/);
  });
});

describe('a device cookie counts as kept only once a later visit presented it (F7)', () => {
  it('a browser that keeps no cookie and no storage is recognised through the proxy as well as directly', async () => {
    // Storage blocked: no agent token, and the cookie the service sets never comes back.
    const direct = withoutToken(deviceValues(++seed));
    const viaProxy = withoutToken(deviceValues(++seed));
    const d0 = await identify(identifyBody(direct));
    const p0 = await proxied(identifyBody(viaProxy), null);
    let directKept = 0;
    let proxyKept = 0;
    for (let i = 0; i < 6; i++) {
      if ((await identify(identifyBody(direct), i % 2 ? AWAY : HOME)).visitorId === d0.visitorId) directKept++;
      if ((await proxied(identifyBody(viaProxy), null, { ip: i % 2 ? AWAY : HOME })).body.visitorId === p0.body.visitorId) proxyKept++;
    }
    expect(proxyKept).toBeGreaterThanOrEqual(directKept);
  });
});

// The identity index keys a linkedId with the server's secret: an email cannot be confirmed against it by a dictionary.
describe('stored linkedIds (F6)', () => {
  it('the identity index holds no plain SHA-256 of a linkedId', async () => {
    const linkedId = `indexed-${seed}@example.com`;
    const v = withNewToken(deviceValues(++seed));
    await proxied(identifyBody(v, { linkedId }), null, { linkedId });
    await identify(identifyBody(v, { linkedId }));
    const plain = createHash('sha256').update(`linked:${linkedId}`).digest('base64url');
    const db = h.store.db;
    for (const c of await db.listCollections().toArray()) {
      const docs = await db.collection(c.name).find({}).toArray();
      expect(JSON.stringify(docs)).not.toContain(plain);
    }
  });
});
