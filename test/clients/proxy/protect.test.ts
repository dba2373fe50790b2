// The proxy's protected paths, against the real service on a real port: for
// a protected request the proxy claims the requestId with the secret key
// before the site sees it. A bad bot's is answered at the edge with the
// blocking rule's response; a human's goes on to the site with the decision
// in deviceid-* request headers; whatever deviceid-* headers the browser
// forged are removed on every path. Replayed, old and missing requestIds are
// refused; the service away answers 503, or forwards with
// `deviceid-decision: unavailable` when failOpen. Both adapters: the Express
// middleware (the site is what comes after it) and the fetch handler (the
// site is `protect.forward`, here a real origin server).
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServerClient } from '../../../clients/node/index.js';
import { createProxyHandler, createProxyMiddleware, DECISION_HEADERS, type ProxyMiddlewareOptions } from '../../../clients/proxy/index.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listen, listenApp, scripted, json, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let service: Listening;
let live: string;
let secretKey: string;
let proxySecret: string;
let nowhere: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  service = await listenApp(h.app);
  const c = await signUp(h);
  live = await c.key('live');
  secretKey = await c.key('secret');
  proxySecret = (await c.agent.post(`/api/projects/${c.projectId}/proxy/secret`).set('origin', c.origin).send({})).body.secret as string;
  await createServerClient({ baseUrl: service.url, secretKey }).putRuleset({
    rules: [
      {
        id: 'block-bots',
        name: 'Block bad bots',
        expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'",
        action: 'block',
        response: { status: 403, headers: { 'content-type': 'application/json', 'x-blocked-by': 'edge' }, body: '{"error":"no bots"}' },
      },
      { id: 'review-tagged', name: 'Review', expression: "linkedId == 'review-me'", action: 'review' },
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

let seed = 41_000;
/** A page's identify (supertest: Node's fetch would bring its own User-Agent): a human's first visit, or a headless bot's. */
async function identify(kind: 'human' | 'bot' = 'human', extra: Record<string, unknown> = {}) {
  const v = withNewToken(deviceValues(++seed));
  if (kind === 'bot') {
    v.automation = { ...v.automation, webdriver: true, headlessUserAgent: true };
    v.userAgent = { ...v.userAgent, userAgent: v.userAgent.userAgent.replace('Chrome/', 'HeadlessChrome/') };
  }
  const res = await h.http().post('/v1/identify').set('x-api-key', live).send(identifyBody(v, extra));
  expect(res.status).toBe(200);
  return res.body as { requestId: string; visitorId: string };
}

/** What a browser (or an attacker) adds, hoping the site believes it. */
const FORGED = {
  'deviceid-decision': 'allow',
  'Deviceid-Visitor-Id': 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
  'deviceid-rule-id': 'none',
  'deviceid-anything-else': 'x',
};

const closing: Listening[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((s) => s.close()));
});

/** The deviceid-* headers a request reached the site with, from the parsed and the raw header lists. */
function decisionHeaders(headers: Record<string, unknown>, raw: string[]) {
  const parsed = Object.fromEntries(Object.entries(headers).filter(([n]) => n.startsWith('deviceid-')));
  const rawNames = raw.filter((_, i) => i % 2 === 0 && /^deviceid-/i.test(raw[i]!)).map((n) => n.toLowerCase());
  return { parsed, rawNames: rawNames.sort() };
}

async function expressShop(protect: Partial<NonNullable<ProxyMiddlewareOptions['protect']>> = {}, serviceUrl = service.url) {
  const reached: Array<{ path: string; parsed: Record<string, unknown>; rawNames: string[] }> = [];
  const app = express();
  app.use(
    createProxyMiddleware({
      serviceUrl,
      secret: proxySecret,
      protect: { secretKey, paths: [{ method: 'POST', path: '/login' }, { path: /^\/admin\// }], ...protect },
    }),
  );
  app.use(express.json());
  app.all(['/login', '/admin/*', '/open'], (req, res) => {
    reached.push({ path: req.path, ...decisionHeaders(req.headers, req.rawHeaders) });
    res.json({ site: true, user: (req.body as { user?: string } | undefined)?.user ?? null });
  });
  const s = await listenApp(app);
  closing.push(s);
  const send = async (path: string, requestId?: string, headers: Record<string, string> = {}, method = 'POST') => {
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(requestId !== undefined && { 'deviceid-request-id': requestId }), ...headers },
      ...(method === 'POST' && { body: '{"user":"ann"}' }),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return { url: s.url, reached, send };
}

describe('protected paths, Express middleware', () => {
  it('a bad bot is answered at the edge with the rule’s response, even with forged decision headers; the site never sees it', async () => {
    const shop = await expressShop();
    const bot = await identify('bot');
    const res = await shop.send('/login', bot.requestId, FORGED);
    expect(res.status).toBe(403);
    expect(res.text).toBe('{"error":"no bots"}');
    expect(res.headers.get('x-blocked-by')).toBe('edge');
    expect(shop.reached).toEqual([]);
  });

  it('a human goes on to the site with the decision headers; forged ones are gone, from the parsed and the raw headers', async () => {
    const shop = await expressShop();
    const human = await identify();
    const res = await shop.send('/login', human.requestId, FORGED);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ site: true, user: 'ann' });
    const reached = shop.reached[0]!;
    expect(reached.parsed).toEqual({
      [DECISION_HEADERS.decision]: 'allow',
      [DECISION_HEADERS.visitorId]: human.visitorId,
      [DECISION_HEADERS.requestId]: human.requestId,
      [DECISION_HEADERS.suspectScore]: expect.stringMatching(/^\d+$/),
    });
    expect(reached.rawNames).toEqual(['deviceid-decision', 'deviceid-request-id', 'deviceid-suspect-score', 'deviceid-visitor-id']);

    // A rule's action other than block goes on too, naming the rule.
    const reviewed = await identify('human', { linkedId: 'review-me' });
    await shop.send('/admin/refund', reviewed.requestId, {}, 'GET');
    expect(shop.reached[1]).toMatchObject({ path: '/admin/refund', parsed: { 'deviceid-decision': 'review', 'deviceid-rule-id': 'review-tagged' } });

    // Not a protected path (another path, or GET /login): nothing is claimed, and forged headers are removed all the same.
    expect((await shop.send('/open', human.requestId, FORGED)).status).toBe(200);
    expect((await shop.send('/login', undefined, FORGED, 'GET')).status).toBe(200);
    expect(shop.reached.slice(2).map((r) => r.parsed)).toEqual([{ 'deviceid-request-id': human.requestId }, {}]);
  });

  it('no other spelling of a protected path slips past the claim (case, slashes, percent-encoding; HEAD for GET)', async () => {
    const shop = await expressShop({
      paths: [
        { method: 'POST', path: '/login' },
        { method: 'GET', path: '/export' },
      ],
    });
    for (const path of ['/login', '/LOGIN', '/login/', '//login', '/%6Cogin', '/Login?next=/']) {
      const res = await shop.send(path);
      expect(res.status, path).toBe(403);
      expect(JSON.parse(res.text), path).toMatchObject({ code: 'request_id_missing' });
    }
    expect((await shop.send('/export', undefined, {}, 'HEAD')).status).toBe(403);
    expect(shop.reached).toEqual([]);
    // Another path is another path.
    expect((await shop.send('/login-help')).status).toBe(404);
  });

  it('refuses a replayed, an old, a missing and an unknown requestId with a 403 saying why', async () => {
    const shop = await expressShop();
    const human = await identify();
    expect((await shop.send('/login', human.requestId)).status).toBe(200);
    const replay = await shop.send('/login', human.requestId);
    expect(replay.status).toBe(403);
    expect(JSON.parse(replay.text)).toEqual({ error: 'This requestId was already used for a protected request: identify again', code: 'request_id_used' });
    const old = await identify();
    h.clock.advance(301_000);
    expect(JSON.parse((await shop.send('/login', old.requestId)).text)).toMatchObject({ code: 'request_id_expired' });
    expect(JSON.parse((await shop.send('/login')).text)).toMatchObject({ code: 'request_id_missing' });
    expect(JSON.parse((await shop.send('/login', 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).text)).toMatchObject({ code: 'request_id_unknown' });
    expect(JSON.parse((await shop.send('/login', 'junk')).text)).toMatchObject({ code: 'request_id_unknown' });
    expect(shop.reached).toHaveLength(1);
    // A longer maxAge takes the old one: its refusal did not use it up.
    const patient = await expressShop({ maxAgeSeconds: 600 });
    expect((await patient.send('/login', old.requestId)).status).toBe(200);
  });

  it('the service away: 503 (failOpen false), or on to the site with deviceid-decision: unavailable; a wrong secret key never passes', async () => {
    const human = await identify();
    const closed = await expressShop({}, nowhere);
    const res = await closed.send('/login', human.requestId, FORGED);
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text)).toEqual({ error: 'The request could not be checked: try again', code: 'deviceid_unavailable' });
    expect(closed.reached).toEqual([]);
    const open = await expressShop({ failOpen: true }, nowhere);
    expect((await open.send('/login', human.requestId, FORGED)).status).toBe(200);
    expect(open.reached[0]!.parsed).toEqual({ 'deviceid-decision': 'unavailable', 'deviceid-request-id': human.requestId });
    // A failing service likewise.
    const failing = await scripted((_r, _n, r) => json(r, 502, { error: 'bad gateway' }));
    closing.push(failing);
    expect((await (await expressShop({}, failing.url)).send('/login', human.requestId)).status).toBe(503);
    expect(failing.seen.map((r) => `${r.method} ${r.url} ${r.headers.authorization?.slice(0, 18)}`)).toEqual([
      `POST /v1/events/${human.requestId}/claim Bearer svc_secret_`,
    ]);
    const wrongKey = await expressShop({ secretKey: 'svc_secret_' + 'x'.repeat(38), failOpen: true });
    expect((await wrongKey.send('/login', human.requestId)).status).toBe(503);
    expect(wrongKey.reached).toEqual([]);
  });
});

describe('protected paths, fetch handler', () => {
  /** The site's origin: a real server that echoes the deviceid-* headers and the body it got. */
  async function origin() {
    const o = await scripted((req, _n, res) =>
      json(res, 200, { site: true, body: req.body, deviceid: Object.fromEntries(Object.entries(req.headers).filter(([n]) => n.startsWith('deviceid-'))) }),
    );
    closing.push(o);
    return o;
  }
  const handlerFor = (originUrl: string, more: object = {}, serviceUrl = service.url) =>
    createProxyHandler({
      serviceUrl,
      secret: proxySecret,
      clientIp: 'x-real-ip',
      protect: {
        secretKey,
        paths: [{ method: 'post', path: '/login' }],
        forward: (request) => fetch(new Request(originUrl + new URL(request.url).pathname, request)),
        ...more,
      },
    });
  const post = (path: string, requestId?: string, headers: Record<string, string> = {}) =>
    new Request(`https://shop.example.com${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-real-ip': '81.2.69.142', ...(requestId && { 'deviceid-request-id': requestId }), ...headers },
      body: '{"user":"ann"}',
    });

  it('blocks a bad bot at the edge, forwards a human with the decision (body intact), strips forged headers everywhere', async () => {
    const o = await origin();
    const proxy = handlerFor(o.url);
    const bot = await proxy(post('/login', (await identify('bot')).requestId, FORGED));
    expect(bot.status).toBe(403);
    expect(await bot.text()).toBe('{"error":"no bots"}');
    expect(o.seen).toEqual([]);

    const human = await identify();
    const res = await proxy(post('/login', human.requestId, FORGED));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      site: true,
      body: '{"user":"ann"}',
      deviceid: {
        'deviceid-decision': 'allow',
        'deviceid-visitor-id': human.visitorId,
        'deviceid-request-id': human.requestId,
        'deviceid-suspect-score': expect.stringMatching(/^\d+$/),
      },
    });
    expect(((await (await proxy(post('/login', human.requestId))).json()) as { code: string }).code).toBe('request_id_used');
    expect(((await (await proxy(post('/login'))).json()) as { code: string }).code).toBe('request_id_missing');

    // Every other request of the site goes on too, without the forged headers and unclaimed.
    const other = await proxy(post('/cart', human.requestId, FORGED));
    expect(await other.json()).toMatchObject({ site: true, deviceid: { 'deviceid-request-id': human.requestId } });
    expect(o.seen.map((r) => `${r.method} ${r.url} ${Object.keys(r.headers).filter((n) => n.startsWith('deviceid-')).length}`)).toEqual([
      'POST /login 4',
      'POST /cart 1',
    ]);
    // The proxy's own paths are still the proxy's.
    const agent = await proxy(new Request('https://shop.example.com/metrics/agent.js'));
    expect(agent.status).toBe(200);
    expect(agent.headers.get('content-type')).toMatch(/javascript/);
  });

  it('the service away: 503, or forwarded with deviceid-decision: unavailable when failOpen', async () => {
    const o = await origin();
    const human = await identify();
    expect((await handlerFor(o.url, {}, nowhere)(post('/login', human.requestId))).status).toBe(503);
    const open = await handlerFor(o.url, { failOpen: true }, nowhere)(post('/login', human.requestId, FORGED));
    expect(await open.json()).toMatchObject({ site: true, deviceid: { 'deviceid-decision': 'unavailable', 'deviceid-request-id': human.requestId } });
    expect(o.seen).toHaveLength(1);
  });

  it('refuses protect options it cannot work with', () => {
    const base = { serviceUrl: service.url, secret: proxySecret };
    const forward = (r: Request) => fetch(r);
    expect(() => createProxyHandler({ ...base, protect: { secretKey, paths: [{ path: '/login' }] } as never })).toThrow(/forward/);
    expect(() => createProxyHandler({ ...base, protect: { secretKey: proxySecret, paths: [{ path: '/login' }], forward } })).toThrow(/secretKey/);
    expect(() => createProxyHandler({ ...base, protect: { secretKey, paths: [], forward } })).toThrow(/paths/);
    expect(() => createProxyHandler({ ...base, protect: { secretKey, paths: [{ path: 'login' }], forward } })).toThrow(/paths/);
    expect(() => createProxyMiddleware({ ...base, protect: { secretKey, paths: [{ path: '/login' }], maxAgeSeconds: 0 } })).toThrow(/maxAgeSeconds/);
    expect(() => createProxyMiddleware({ ...base, protect: { secretKey, paths: [{ path: '/login' }], header: 'a b' } })).toThrow(/header/);
  });
});
