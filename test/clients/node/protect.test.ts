// protect() and protectFetch() of deviceid/client in front of a shop's
// POST /login, over real HTTP to the real service on a real port: a human's
// requestId goes on to the handler with its claim, a bad bot's is answered
// with the blocking rule's response, a replayed, old (the harness clock moved
// on), unknown or missing requestId is refused with a 403 saying why, and a
// service that is away or failing answers 503 unless failOpen lets the
// request through without a decision; a wrong key is refused either way.
// The hooks replace each default answer.
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createServerClient,
  NetworkError,
  protect,
  protectFetch,
  type Claim,
  type ProtectOptions,
  type Refusal,
  type Unavailable,
} from '../../../clients/node/index.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { json, listen, listenApp, scripted, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let service: Listening;
let c: Customer;
let live: string;
let secret: string;
/** An address where nothing listens: the service away. */
let nowhere: string;

const blockBots = {
  id: 'block-bots',
  name: 'Block bad bots',
  expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'",
  action: 'block' as const,
  response: { status: 403, headers: { 'content-type': 'application/json', 'x-blocked-by': 'deviceid' }, body: '{"error":"no bots"}' },
};

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  service = await listenApp(h.app);
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  await createServerClient({ baseUrl: service.url, secretKey: secret }).putRuleset({
    rules: [
      blockBots,
      { id: 'blocked-user', name: 'A blocked account', expression: "linkedId == 'blocked-user'", action: 'block' },
      { id: 'challenge-user', name: 'Ask for a second factor', expression: "linkedId == 'challenge-me'", action: 'challenge' },
    ],
  });
  const closed = await listen((_req, res) => res.end());
  nowhere = closed.url;
  await closed.close();
});
afterAll(async () => {
  await service.close();
  await h.close();
});

let seed = 31_000;
/**
 * An identify with a page's signals: a human's first visit, or a headless
 * bot's. (Through supertest: Node's fetch would add its own User-Agent, which
 * the edge rightly takes for automation. The claims go over real HTTP.)
 */
async function identify(kind: 'human' | 'bot' = 'human', extra: Record<string, unknown> = {}, key = live): Promise<{ requestId: string; visitorId: string }> {
  const v = withNewToken(deviceValues(++seed));
  if (kind === 'bot') {
    v.automation = { ...v.automation, webdriver: true, headlessUserAgent: true };
    v.userAgent = { ...v.userAgent, userAgent: v.userAgent.userAgent.replace('Chrome/', 'HeadlessChrome/') };
  }
  const res = await h.http().post('/v1/identify').set('x-api-key', key).send(identifyBody(v, extra));
  expect(res.status).toBe(200);
  return res.body as { requestId: string; visitorId: string };
}

const shops: Listening[] = [];
afterEach(async () => {
  await Promise.all(shops.splice(0).map((s) => s.close()));
});

/** The shop: POST /login behind protect(), answering what the handler saw. */
async function shop(options: Partial<ProtectOptions<express.Request, express.Response>> = {}) {
  const app = express();
  app.use(express.json());
  app.use(express.urlencoded({ extended: false }));
  app.post('/login', protect<express.Request, express.Response>({ baseUrl: service.url, secretKey: secret, ...options }), (req, res) => {
    res.json({ handled: true, deviceid: req.deviceid ?? null, user: (req.body as { user?: string }).user });
  });
  // A route without protect(): nothing is claimed.
  app.post('/open', (req, res) => res.json({ deviceid: req.deviceid ?? null }));
  const s = await listenApp(app);
  shops.push(s);
  return s;
}

async function login(url: string, requestId: string | undefined, body: object | string = { user: 'ann' }, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/login`, {
    method: 'POST',
    headers: {
      'content-type': typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json',
      ...(requestId !== undefined && { 'deviceid-request-id': requestId }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

describe('protect() for Express', () => {
  it('augments Express’s Request with the claim, and leaves the inference of the handlers’ body alone', () => {
    expectTypeOf<express.Request['deviceid']>().toEqualTypeOf<Claim | undefined>();
    express().post('/login', protect({ baseUrl: 'https://deviceid.example.com', secretKey: secret ?? 'svc_secret_x' }), (req, res) => {
      expectTypeOf(req.body).toBeAny();
      res.end();
    });
  });

  it('a human’s requestId goes on to the handler with its claim at req.deviceid; the requestId then serves no other request', async () => {
    const s = await shop();
    const human = await identify();
    const first = await login(s.url, human.requestId);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ handled: true, user: 'ann', deviceid: { requestId: human.requestId, visitorId: human.visitorId } });
    expect(first.body.deviceid.decision).toEqual({ action: 'allow', rulesetVersion: 1, testMatches: [] });

    const replay = await login(s.url, human.requestId);
    expect(replay.status).toBe(403);
    expect(replay.body).toEqual({ error: 'This requestId was already used for a protected request: identify again', code: 'request_id_used' });
    expect(replay.headers.get('cache-control')).toBe('no-store');
  });

  it('a bad bot’s requestId is answered with the rule’s response (status, headers, body); the handler never runs', async () => {
    const s = await shop();
    const bot = await identify('bot');
    const res = await login(s.url, bot.requestId);
    expect(res.status).toBe(403);
    expect(res.text).toBe('{"error":"no bots"}');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-blocked-by')).toBe('deviceid');
    // A block rule without a response of its own: the service's default, 403 with a JSON error.
    const blocked = await identify('human', { linkedId: 'blocked-user' });
    expect(await login(s.url, blocked.requestId)).toMatchObject({ status: 403, text: '{"error":"Request blocked"}' });
    // A challenge is the application's to carry out: it goes on, with the action.
    const challenged = await identify('human', { linkedId: 'challenge-me' });
    const answer = await login(s.url, challenged.requestId);
    expect(answer.status).toBe(200);
    expect(answer.body.deviceid.decision).toMatchObject({ action: 'challenge', ruleId: 'challenge-user' });
  });

  it('refuses a requestId older than maxAgeSeconds (the clock moved on), a missing, a malformed and an unknown one, each saying why', async () => {
    const s = await shop();
    const old = await identify();
    h.clock.advance(301_000);
    expect(await login(s.url, old.requestId)).toMatchObject({
      status: 403,
      body: { error: 'This requestId is too old: identify again', code: 'request_id_expired' },
    });
    // A longer maxAge takes it: the refusal for its age did not use it up.
    const patient = await shop({ maxAgeSeconds: 600 });
    expect((await login(patient.url, old.requestId)).status).toBe(200);

    expect(await login(s.url, undefined)).toMatchObject({
      status: 403,
      body: { error: 'No requestId came with the request (header deviceid-request-id): identify first', code: 'request_id_missing' },
    });
    expect(await login(s.url, '   ')).toMatchObject({ status: 403, body: { code: 'request_id_missing' } });
    expect(await login(s.url, 'req_nope')).toMatchObject({ status: 403, body: { error: 'Unknown requestId', code: 'request_id_unknown' } });
    expect(await login(s.url, 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).toMatchObject({ status: 403, body: { code: 'request_id_unknown' } });
    // Another project's requestId is unknown to this one.
    const other = await signUp(h);
    const theirs = await identify('human', {}, await other.key('live'));
    expect(await login(s.url, theirs.requestId)).toMatchObject({
      status: 403,
      body: { code: 'request_id_unknown' },
    });
  });

  it('reads the requestId from a JSON or form body field when told, the header first', async () => {
    const s = await shop({ field: 'deviceidRequestId' });
    const a = await identify();
    expect((await login(s.url, undefined, { user: 'ann', deviceidRequestId: a.requestId })).body.deviceid.requestId).toBe(a.requestId);
    const b = await identify();
    expect((await login(s.url, undefined, `user=bob&deviceidRequestId=${b.requestId}`)).body).toMatchObject({
      user: 'bob',
      deviceid: { requestId: b.requestId },
    });
    const d = await identify();
    expect((await login(s.url, d.requestId, { deviceidRequestId: 'req_nope' })).body.deviceid.requestId).toBe(d.requestId);
    // Only the field: the header is not read.
    const only = await shop({ header: false, field: 'rid' });
    const e = await identify();
    expect(await login(only.url, e.requestId, {})).toMatchObject({ status: 403, body: { error: expect.stringContaining('(field rid)') } });
    // A field without a body parser in front is a mistake of the app's: an error, not a refusal.
    const app = express();
    app.post('/login', protect({ baseUrl: service.url, secretKey: secret, field: 'rid' }), (_req, res) => res.send('in'));
    const errors: unknown[] = [];
    app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(err);
      res.status(500).end();
    });
    const bare = await listenApp(app);
    shops.push(bare);
    expect((await fetch(`${bare.url}/login`, { method: 'POST', body: 'rid=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(
      500,
    );
    expect(String(errors[0])).toMatch(/needs a parsed body/);
  });

  it('the service away: 503 (failOpen false); with failOpen the handler runs without req.deviceid', async () => {
    const closed = await shop({ baseUrl: nowhere });
    const human = await identify();
    const res = await login(closed.url, human.requestId);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'The request could not be checked: try again', code: 'deviceid_unavailable' });
    const open = await shop({ baseUrl: nowhere, failOpen: true });
    expect(await login(open.url, human.requestId)).toMatchObject({ status: 200, body: { handled: true, deviceid: null } });
    // The requestId was never claimed: it still serves once.
    expect((await login((await shop()).url, human.requestId)).status).toBe(200);
  });

  it('a failing service (5xx) and a slow one are outages too; a wrong key is refused even with failOpen', async () => {
    const failing = await scripted((_r, _n, res) => json(res, 500, { error: 'Internal error', code: 'internal' }));
    const hung = await scripted(() => undefined);
    try {
      const human = await identify();
      expect((await login((await shop({ baseUrl: failing.url })).url, human.requestId)).status).toBe(503);
      expect((await login((await shop({ baseUrl: failing.url, failOpen: true })).url, human.requestId)).body).toMatchObject({ handled: true, deviceid: null });
      expect((await login((await shop({ baseUrl: hung.url, timeoutMs: 200, failOpen: true })).url, human.requestId)).status).toBe(200);
      // Exactly one claim per request: a claim whose answer may be lost is never repeated.
      expect(failing.seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(2).fill(`POST /v1/events/${human.requestId}/claim`));
      const wrongKey = await shop({ secretKey: 'svc_secret_' + 'x'.repeat(38), failOpen: true });
      expect(await login(wrongKey.url, human.requestId)).toMatchObject({ status: 503, body: { code: 'deviceid_unavailable' } });
    } finally {
      await failing.close();
      await hung.close();
    }
  });

  it('hooks replace each answer: onClaim sees every claim, onRefused, onBlocked and onUnavailable answer their own', async () => {
    const seen: Array<{ kind: string; what: string }> = [];
    const s = await shop({
      onClaim: (claim) => void seen.push({ kind: 'claim', what: claim.decision.action }),
      onRefused: (refusal: Refusal, _req, res) => {
        seen.push({ kind: 'refused', what: refusal.reason });
        res.status(401).json({ again: true, why: refusal.reason, default: JSON.parse(refusal.response.body) });
      },
      onBlocked: (claim, req, res) => {
        res
          .status(429)
          .set('retry-after', '60')
          .send(`slow down ${req.deviceid?.visitorId === claim.visitorId}`);
      },
    });
    const human = await identify();
    expect((await login(s.url, human.requestId)).status).toBe(200);
    expect(await login(s.url, human.requestId)).toMatchObject({
      status: 401,
      body: { again: true, why: 'used', default: { code: 'request_id_used' } },
    });
    const bot = await identify('bot');
    const blocked = await login(s.url, bot.requestId);
    expect(blocked).toMatchObject({ status: 429, text: 'slow down true' });
    expect(blocked.headers.get('retry-after')).toBe('60');
    expect(seen).toEqual([
      { kind: 'claim', what: 'allow' },
      { kind: 'refused', what: 'used' },
      { kind: 'claim', what: 'block' },
    ]);

    const failures: Unavailable[] = [];
    const away = await shop({
      baseUrl: nowhere,
      onUnavailable: (u, _req, res, next) => {
        failures.push(u);
        if (u.outage) return next();
        res.status(500).end();
      },
    });
    expect((await login(away.url, (await identify()).requestId)).body).toMatchObject({ handled: true, deviceid: null });
    expect(failures[0]!.error).toBeInstanceOf(NetworkError);
    expect(failures[0]).toMatchObject({ outage: true, response: { status: 503 } });
    // A hook that throws goes to Express's error handling.
    const throwing = await shop({
      onClaim: () => {
        throw new Error('hook failed');
      },
    });
    expect((await login(throwing.url, (await identify()).requestId)).status).toBe(500);
  });

  it('a block by the ruleset’s defaultAction (no rule, no response) answers 403 {"error":"Request blocked"}', async () => {
    const strict = await signUp(h);
    const strictSecret = await strict.key('secret');
    await createServerClient({ baseUrl: service.url, secretKey: strictSecret }).putRuleset({ rules: [], defaultAction: 'block' });
    const s = await shop({ secretKey: strictSecret });
    const res = await login(s.url, (await identify('human', {}, await strict.key('live'))).requestId);
    expect(res).toMatchObject({ status: 403, text: '{"error":"Request blocked"}' });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('can use a client you already have, and refuses options it cannot work with', async () => {
    const client = createServerClient({ baseUrl: service.url, secretKey: secret });
    const s = await shop({ client, baseUrl: undefined, secretKey: undefined });
    expect((await login(s.url, (await identify()).requestId)).status).toBe(200);
    // The client's own time limit applies (not protect()'s default of 5 s).
    const hung = await scripted(() => undefined);
    try {
      const impatient = await shop({ client: createServerClient({ baseUrl: hung.url, secretKey: secret, timeoutMs: 100 }) });
      const started = Date.now();
      expect((await login(impatient.url, (await identify()).requestId)).status).toBe(503);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await hung.close();
    }
    expect(() => protect({ baseUrl: service.url, secretKey: 'svc_live_abc' })).toThrow(/secretKey/);
    expect(() => protect({ secretKey: secret })).toThrow(/baseUrl/);
    expect(() => protect({ client, maxAgeSeconds: 0 })).toThrow(/maxAgeSeconds/);
    expect(() => protect({ client, header: false })).toThrow(/header or a field/);
    expect(() => protect({ client, header: 'Bad Header' })).toThrow(/header/);
    expect(() => protectFetch(() => new Response(), { client, timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});

describe('protectFetch()', () => {
  const handler = async (request: Request, deviceid: Claim | null, extra?: { env: string }) =>
    Response.json({ deviceid, body: await request.text(), env: extra?.env ?? null });
  const post = (requestId?: string, body = '{"user":"ann"}', type = 'application/json') =>
    new Request('https://shop.example.com/login', {
      method: 'POST',
      headers: { 'content-type': type, ...(requestId !== undefined && { 'deviceid-request-id': requestId }) },
      body,
    });

  it('claims the requestId: a human’s goes on to the handler with the claim (and the runtime’s arguments), a bot’s gets the rule’s response', async () => {
    const guarded = protectFetch(handler, { baseUrl: service.url, secretKey: secret });
    const human = await identify();
    const res = await guarded(post(human.requestId), { env: 'prod' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { deviceid: Claim; body: string; env: string };
    expect(body).toMatchObject({ deviceid: { requestId: human.requestId, decision: { action: 'allow' } }, body: '{"user":"ann"}', env: 'prod' });

    const replay = await guarded(post(human.requestId));
    expect(replay.status).toBe(403);
    expect(await replay.json()).toEqual({ error: 'This requestId was already used for a protected request: identify again', code: 'request_id_used' });

    const bot = await guarded(post((await identify('bot')).requestId));
    expect(bot.status).toBe(403);
    expect(bot.headers.get('x-blocked-by')).toBe('deviceid');
    expect(await bot.text()).toBe('{"error":"no bots"}');

    const missing = await guarded(post());
    expect(missing.status).toBe(403);
    expect(((await missing.json()) as { code: string }).code).toBe('request_id_missing');

    const old = await identify();
    h.clock.advance(301_000);
    expect(((await (await guarded(post(old.requestId))).json()) as { code: string }).code).toBe('request_id_expired');
  });

  it('reads a body field from a copy (the handler still reads the body), JSON or form', async () => {
    const guarded = protectFetch(handler, { baseUrl: service.url, secretKey: secret, field: 'rid' });
    const a = await identify();
    const json = JSON.stringify({ user: 'ann', rid: a.requestId });
    const res = await guarded(post(undefined, json));
    expect(await res.json()).toMatchObject({ deviceid: { requestId: a.requestId }, body: json });
    const b = await identify();
    const form = `user=bob&rid=${b.requestId}`;
    expect(await (await guarded(post(undefined, form, 'application/x-www-form-urlencoded'))).json()).toMatchObject({
      deviceid: { requestId: b.requestId },
      body: form,
    });
    expect((await guarded(post(undefined, '{not json'))).status).toBe(403);
  });

  it('the service away: 503, or the handler with deviceid null (failOpen, or onUnavailable answering null)', async () => {
    const human = await identify();
    const closed = await protectFetch(handler, { baseUrl: nowhere, secretKey: secret })(post(human.requestId));
    expect(closed.status).toBe(503);
    expect(await closed.json()).toEqual({ error: 'The request could not be checked: try again', code: 'deviceid_unavailable' });
    const open = await protectFetch(handler, { baseUrl: nowhere, secretKey: secret, failOpen: true })(post(human.requestId));
    expect(await open.json()).toMatchObject({ deviceid: null, body: '{"user":"ann"}' });
    const custom = await protectFetch(handler, { baseUrl: nowhere, secretKey: secret, onUnavailable: () => null })(post(human.requestId));
    expect(await custom.json()).toMatchObject({ deviceid: null });
    const own = protectFetch(handler, {
      baseUrl: service.url,
      secretKey: secret,
      onRefused: (r) => Response.json({ mine: r.reason }, { status: 401 }),
      onBlocked: (claim) => new Response(`blocked by ${claim.decision.ruleId}`, { status: 451 }),
    });
    expect(await (await own(post())).json()).toEqual({ mine: 'missing' });
    const bot = await own(post((await identify('bot')).requestId));
    expect(bot.status).toBe(451);
    expect(await bot.text()).toBe('blocked by block-bots');
  });
});
