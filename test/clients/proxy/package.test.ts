// @deviceid/proxy against a recording server and against the real service
// over real HTTP: the fetch handler under Node's own Request/Response and
// the Express middleware forward only the device cookie and the headers
// identify needs (no other cookie, no credential header, no deviceid-proxy-*
// header of the browser's), add the client address, host, scheme and secret,
// pass the service's Set-Cookie (with the site's domain when told), serve
// the agent script from a cache revalidated with the service's ETag, and
// answer clear errors when the service is slow or away, reporting them with
// the next call that gets through.
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyHandler, createProxyMiddleware, DEVICE_COOKIE, PROXY_HEADERS } from '../../../clients/proxy/index.js';
import { DEVICE_COOKIE as CONTRACT_COOKIE, PROXY_HEADERS as CONTRACT_HEADERS } from '../../../contract/proxy.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { json, listen, listenApp, scripted, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody, withoutToken } from '../../support/signals.js';

let h: Harness;
let service: Listening;
let c: Customer;
let live: string;
let secret: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  service = await listenApp(h.app);
  c = await signUp(h);
  live = await c.key('live');
  secret = (await c.agent.post(`/api/projects/${c.projectId}/proxy/secret`).set('origin', c.origin).send({})).body.secret;
});
afterAll(async () => {
  await service.close();
  await h.close();
});

/** What a browser on https://shop.example.com sends to the proxy, with cookies and credentials of the shop's own. */
const BROWSER = {
  'content-type': 'application/json',
  origin: 'https://shop.example.com',
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  'accept-language': 'en-GB,en;q=0.9',
  authorization: 'Bearer shop-session-token',
  'x-csrf-token': 'shop-csrf',
  // A browser (or an attacker) cannot smuggle proxy headers through.
  [PROXY_HEADERS.clientIp]: '1.2.3.4',
  [PROXY_HEADERS.error]: 'timeout; at=1',
  'x-forwarded-for': '9.9.9.9',
};
/** A signed agent's Web Bot Auth headers (RFC 9421): forwarded as they are, for the service to verify. */
const WEB_BOT_AUTH = {
  signature: 'sig1=:c2lnbmF0dXJl:',
  'signature-input': 'sig1=("@authority" "signature-agent";key="sig1");created=1;expires=2;keyid="k";alg="ed25519";tag="web-bot-auth"',
  'signature-agent': 'sig1="https://agent.example"',
};
const shopCookies = (device?: string) => `shop_session=s3cr3t; _ga=GA1.2.3${device ? `; ${device}` : ''}; cart=42`;

const cookieOf = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith(`${DEVICE_COOKIE}=`)) ?? null;

describe('@deviceid/proxy', () => {
  it('speaks the contract’s header and cookie names', () => {
    expect(PROXY_HEADERS).toEqual(CONTRACT_HEADERS);
    expect(DEVICE_COOKIE).toBe(CONTRACT_COOKIE);
  });

  it('fetch handler (Node’s Request/Response): forwards only the device cookie and identify’s headers, adds the proxy’s', async () => {
    const upstream = await scripted((_req, _n, res) => json(res, 200, { ok: true }, { 'set-cookie': `${DEVICE_COOKIE}=1.a.b; Max-Age=10; Path=/; HttpOnly` }));
    try {
      const proxy = createProxyHandler({ serviceUrl: upstream.url, secret: 'svc_proxy_test', pathPrefix: '/metrics', clientIp: 'cf-connecting-ip' });
      const res = await proxy(
        new Request('https://shop.example.com/metrics/v1/identify', {
          method: 'POST',
          headers: {
            ...BROWSER,
            cookie: shopCookies(`${DEVICE_COOKIE}=1.tok.mac`),
            'cf-connecting-ip': '81.2.69.142',
            ...WEB_BOT_AUTH,
          },
          body: '{"signals":{}}',
        }),
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(cookieOf(res)).toBe(`${DEVICE_COOKIE}=1.a.b; Max-Age=10; Path=/; HttpOnly`);
      const seen = upstream.seen[0]!;
      expect(seen.method).toBe('POST');
      expect(seen.url).toBe('/v1/identify');
      expect(seen.body).toBe('{"signals":{}}');
      expect(seen.headers.cookie).toBe(`${DEVICE_COOKIE}=1.tok.mac`);
      for (const gone of ['authorization', 'x-csrf-token', 'x-forwarded-for', 'cf-connecting-ip', PROXY_HEADERS.error])
        expect(seen.headers[gone], gone).toBeUndefined();
      expect(seen.headers).toMatchObject({
        ...WEB_BOT_AUTH,
        [PROXY_HEADERS.secret]: 'svc_proxy_test',
        [PROXY_HEADERS.clientIp]: '81.2.69.142',
        [PROXY_HEADERS.host]: 'shop.example.com',
        [PROXY_HEADERS.proto]: 'https',
        origin: 'https://shop.example.com',
        'user-agent': BROWSER['user-agent'],
        'accept-language': BROWSER['accept-language'],
      });
      // No device cookie from the browser: no Cookie header at all.
      await proxy(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: { ...BROWSER, cookie: shopCookies() }, body: '{}' }));
      expect(upstream.seen[1]!.headers.cookie).toBeUndefined();
      // Other paths are not the proxy's.
      expect((await proxy(new Request('https://shop.example.com/checkout'))).status).toBe(404);
      expect((await proxy(new Request('https://shop.example.com/metrics/v1/events'))).status).toBe(404);
      expect((await proxy(new Request('https://shop.example.com/metrics/v1/identify'))).status).toBe(405);
      const big = await proxy(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: BROWSER, body: 'x'.repeat(300_000) }));
      expect(big.status).toBe(413);
      expect(upstream.seen).toHaveLength(2);
    } finally {
      await upstream.close();
    }
  });

  it('fetch handler against the service: sets the device cookie on the site (with its domain when told) and recognises the device by it alone', async () => {
    const proxy = createProxyHandler({ serviceUrl: service.url, secret, cookieDomain: 'example.com', clientIp: { header: 'x-forwarded-for', hops: 1 } });
    const call = (body: object, cookie: string) =>
      proxy(
        new Request('https://shop.example.com/metrics/v1/identify', {
          method: 'POST',
          headers: { ...BROWSER, 'x-api-key': live, cookie, 'x-forwarded-for': '10.0.0.1, 81.2.69.142' },
          body: JSON.stringify(body),
        }),
      );
    const device = deviceValues(301);
    const first = await call(identifyBody(device), shopCookies());
    const body = (await first.json()) as { visitorId: string; ip: string };
    expect(first.status, JSON.stringify(body)).toBe(200);
    expect(body.ip).toBe('81.2.69.142');
    const cookie = cookieOf(first)!;
    expect(cookie).toMatch(
      new RegExp(`^${DEVICE_COOKIE}=1\\.[\\w-]{22}\\.[\\w-]{22}; Max-Age=34560000; Path=/; HttpOnly; SameSite=Lax; Secure; Domain=example.com$`),
    );
    h.clock.advance(8 * 24 * 3_600_000);
    const again = await call(identifyBody(withoutToken(device)), shopCookies(cookie.split(';')[0]));
    expect(((await again.json()) as { visitorId: string }).visitorId).toBe(body.visitorId);
  });

  it('Express middleware: the same forwarding over real HTTP, other paths to next()', async () => {
    const upstream = await scripted((_req, _n, res) =>
      json(res, 201, { ok: true }, { 'set-cookie': [`other=1; Path=/`, `${DEVICE_COOKIE}=1.c.d; Path=/; Domain=evil.example; HttpOnly`] } as never),
    );
    const app = express();
    app.use(express.json());
    app.use(createProxyMiddleware({ serviceUrl: upstream.url, secret: 'svc_proxy_test', pathPrefix: '/m/' }));
    app.get('/checkout', (_req, res) => res.send('the shop'));
    const shop = await listenApp(app);
    try {
      const res = await fetch(`${shop.url}/m/v1/identify?x=1`, {
        method: 'POST',
        headers: { ...BROWSER, cookie: shopCookies(`${DEVICE_COOKIE}=1.tok.mac`) },
        body: JSON.stringify({ signals: { a: 1 } }),
      });
      expect(res.status).toBe(201);
      // Only our cookie comes back, and not with a domain the proxy was not told.
      expect(res.headers.getSetCookie()).toEqual([`${DEVICE_COOKIE}=1.c.d; Path=/; HttpOnly`]);
      const seen = upstream.seen[0]!;
      expect(JSON.parse(seen.body)).toEqual({ signals: { a: 1 } });
      expect(seen.headers.cookie).toBe(`${DEVICE_COOKIE}=1.tok.mac`);
      for (const gone of ['authorization', 'x-csrf-token', 'x-forwarded-for', PROXY_HEADERS.error]) expect(seen.headers[gone], gone).toBeUndefined();
      expect(seen.headers).toMatchObject({
        [PROXY_HEADERS.clientIp]: '127.0.0.1',
        [PROXY_HEADERS.host]: new URL(shop.url).host,
        [PROXY_HEADERS.proto]: 'http',
      });
      expect(await (await fetch(`${shop.url}/checkout`)).text()).toBe('the shop');
      // A raw body (no body parser in front) is read from the stream.
      const raw = express();
      raw.use(createProxyMiddleware({ serviceUrl: upstream.url, secret: 'svc_proxy_test', pathPrefix: '/m' }));
      const rawShop = await listenApp(raw);
      try {
        await fetch(`${rawShop.url}/m/v1/identify`, { method: 'POST', headers: BROWSER, body: '{"signals":{"b":2}}' });
        expect(upstream.seen[1]!.body).toBe('{"signals":{"b":2}}');
        expect((await fetch(`${rawShop.url}/m/v1/identify`, { method: 'POST', headers: BROWSER, body: 'x'.repeat(300_000) })).status).toBe(413);
      } finally {
        await rawShop.close();
      }
    } finally {
      await shop.close();
      await upstream.close();
    }
  });

  it('Express middleware against the service: the cookie is set, sent back alone, and names the device', async () => {
    const app = express();
    app.use(createProxyMiddleware({ serviceUrl: service.url, secret, clientIp: () => '81.2.69.142' }));
    const shop = await listenApp(app);
    try {
      const device = deviceValues(302);
      const call = (body: object, cookie: string) =>
        fetch(`${shop.url}/metrics/v1/identify`, { method: 'POST', headers: { ...BROWSER, 'x-api-key': live, cookie }, body: JSON.stringify(body) });
      const first = await call(identifyBody(device), shopCookies());
      const body = (await first.json()) as { visitorId: string; ip: string };
      expect(body.ip).toBe('81.2.69.142');
      const cookie = cookieOf(first)!;
      expect(cookie).toMatch(new RegExp(`^${DEVICE_COOKIE}=1\\.[\\w-]{22}\\.[\\w-]{22}; Max-Age=34560000; Path=/; HttpOnly; SameSite=Lax$`));
      h.clock.advance(60_000);
      const again = await call(identifyBody(withoutToken(device)), shopCookies(cookie.split(';')[0]));
      expect(((await again.json()) as { visitorId: string }).visitorId).toBe(body.visitorId);
      // A wrong secret reaches the browser as the service's 401.
      const wrong = express();
      wrong.use(createProxyMiddleware({ serviceUrl: service.url, secret: 'svc_proxy_wrong' }));
      const wrongShop = await listenApp(wrong);
      try {
        const res = await fetch(`${wrongShop.url}/metrics/v1/identify`, {
          method: 'POST',
          headers: { ...BROWSER, 'x-api-key': live },
          body: JSON.stringify(identifyBody(device)),
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: 'Invalid or revoked proxy secret', code: 'invalid_proxy_secret' });
      } finally {
        await wrongShop.close();
      }
    } finally {
      await shop.close();
    }
  });

  it('sends the signed-in user’s id from the site’s session as the confirmed linkedId, never one the browser sent (both adapters)', async () => {
    const upstream = await scripted((_req, _n, res) => json(res, 200, { ok: true }));
    const app = express();
    // The site's own session, as its middleware would have read it.
    app.use((req, _res, next) => (((req as unknown as { user: string }).user = 'user-42'), next()));
    app.use(
      createProxyMiddleware({
        serviceUrl: upstream.url,
        secret: 'svc_proxy_test',
        clientIp: () => '81.2.69.142',
        linkedId: (req) => (req as unknown as { user: string }).user,
      }),
    );
    const shop = await listenApp(app);
    try {
      const spoofed = { ...BROWSER, [PROXY_HEADERS.linkedId]: 'victim@example.com' };
      await fetch(`${shop.url}/metrics/v1/identify`, { method: 'POST', headers: spoofed, body: '{}' });
      const handler = createProxyHandler({
        serviceUrl: upstream.url,
        secret: 'svc_proxy_test',
        clientIp: () => '81.2.69.142',
        linkedId: async () => 'user-43',
      });
      await handler(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: spoofed, body: '{}' }));
      const anonymous = createProxyHandler({ serviceUrl: upstream.url, secret: 'svc_proxy_test', clientIp: () => '81.2.69.142', linkedId: () => null });
      await anonymous(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: spoofed, body: '{}' }));
      expect(upstream.seen.map((r) => r.headers[PROXY_HEADERS.linkedId])).toEqual(['user-42', 'user-43', undefined]);
    } finally {
      await shop.close();
      await upstream.close();
    }
    // Against the service: the event carries it.
    const proxy = createProxyHandler({ serviceUrl: service.url, secret, clientIp: () => '81.2.69.142', linkedId: () => 'user-44' });
    const res = await proxy(
      new Request('https://shop.example.com/metrics/v1/identify', {
        method: 'POST',
        headers: { ...BROWSER, 'x-api-key': live },
        body: JSON.stringify(identifyBody(deviceValues(303))),
      }),
    );
    const { requestId } = (await res.json()) as { requestId: string };
    const event = await fetch(`${service.url}/v1/events/${requestId}`, { headers: { 'x-api-key': await c.key('secret') } });
    expect(((await event.json()) as { linkedId: string }).linkedId).toBe('user-44');
  });

  it('serves the agent script from its cache with the service’s ETag, revalidating when the service says so', async () => {
    const proxy = createProxyHandler({ serviceUrl: service.url, secret, clientIp: 'x-real-ip' });
    const direct = await fetch(`${service.url}/agent.js`);
    const etag = direct.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect((await fetch(`${service.url}/agent.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const script = await proxy(new Request('https://shop.example.com/metrics/agent.js'));
    expect(script.status).toBe(200);
    expect(script.headers.get('etag')).toBe(etag);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await script.text()).toBe(await direct.text());
    expect((await proxy(new Request('https://shop.example.com/metrics/agent.js', { headers: { 'if-none-match': etag } }))).status).toBe(304);

    // Served from the cache within the service's max-age; revalidated with If-None-Match when it is 0.
    let maxAge = 300;
    const upstream = await scripted((req, _n, res) => {
      if (req.headers['if-none-match'] === '"v1"') res.writeHead(304, { etag: '"v1"', 'cache-control': `public, max-age=${maxAge}` }).end();
      else res.writeHead(200, { 'content-type': 'text/javascript', etag: '"v1"', 'cache-control': `public, max-age=${maxAge}` }).end('var DeviceId={}');
    });
    try {
      const cached = createProxyHandler({ serviceUrl: upstream.url, secret: 'svc_proxy_test' });
      for (let i = 0; i < 3; i++) expect(await (await cached(new Request('https://shop.example.com/metrics/agent.js'))).text()).toBe('var DeviceId={}');
      expect(upstream.seen).toHaveLength(1);
      maxAge = 0;
      const revalidating = createProxyHandler({ serviceUrl: upstream.url, secret: 'svc_proxy_test' });
      for (let i = 0; i < 3; i++) expect(await (await revalidating(new Request('https://shop.example.com/metrics/agent.js'))).text()).toBe('var DeviceId={}');
      expect(upstream.seen.slice(1).map((s) => s.headers['if-none-match'] ?? null)).toEqual([null, '"v1"', '"v1"']);
    } finally {
      await upstream.close();
    }
  });

  it('answers clear errors when the service is slow or away, and reports them with the next call that gets through', async () => {
    let hang = true;
    const upstream = await scripted((_req, _n, res) => {
      if (!hang) json(res, 200, { ok: true });
    });
    const closed = await listen((_req, res) => res.end());
    const deadUrl = closed.url;
    await closed.close();
    try {
      const slow = createProxyHandler({ serviceUrl: upstream.url, secret: 'svc_proxy_test', timeoutMs: 200, clientIp: 'x-real-ip' });
      const identify = (p = slow) => p(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: BROWSER, body: '{}' }));
      const timedOut = await identify();
      expect(timedOut.status).toBe(504);
      expect(await timedOut.json()).toEqual({ error: 'deviceid proxy: the service did not answer within 200 ms', code: 'service_unavailable' });
      const noScript = await slow(new Request('https://shop.example.com/metrics/agent.js'));
      expect(noScript.status).toBe(504);

      hang = false;
      expect((await identify()).status).toBe(200);
      const report = upstream.seen.at(-1)!.headers[PROXY_HEADERS.error] as string;
      expect(report).toMatch(/^timeout; at=\d{13}$/);
      // Reported once.
      await identify();
      expect(upstream.seen.at(-1)!.headers[PROXY_HEADERS.error]).toBeUndefined();

      const away = createProxyHandler({ serviceUrl: deadUrl, secret: 'svc_proxy_test' });
      const unreachable = await identify(away);
      expect(unreachable.status).toBe(502);
      expect(await unreachable.json()).toEqual({ error: 'deviceid proxy: the service could not be reached', code: 'service_unavailable' });
    } finally {
      await upstream.close();
    }
  });

  it('answers 504 within its time limit when the service stalls after its headers (both adapters, both paths)', async () => {
    // Headers and part of the body, then nothing.
    const upstream = await scripted((req, _n, res) => {
      if (req.url === '/agent.js') res.writeHead(200, { 'content-type': 'text/javascript', 'content-length': '1000' }).write('var DeviceId=');
      else res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': '1000' }).write('{"visitorId":');
    });
    const timeoutMs = 300;
    /** The answer, or a failure (not a hang) when none comes within the limit plus 0.5 s. */
    const answered = async (call: () => Promise<Response>) => {
      const start = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs + 500} ms`)), timeoutMs + 500);
      });
      try {
        const res = await Promise.race([call(), late]);
        expect(res.status).toBe(504);
        expect(await Promise.race([res.json(), late])).toEqual({
          error: `deviceid proxy: the service did not answer within ${timeoutMs} ms`,
          code: 'service_unavailable',
        });
        expect(Date.now() - start).toBeLessThan(timeoutMs + 500);
      } finally {
        clearTimeout(timer);
      }
    };
    const app = express();
    app.use(createProxyMiddleware({ serviceUrl: upstream.url, secret: 'svc_proxy_test', timeoutMs }));
    const shop = await listenApp(app);
    try {
      const handler = createProxyHandler({ serviceUrl: upstream.url, secret: 'svc_proxy_test', timeoutMs, clientIp: 'x-real-ip' });
      await answered(() => handler(new Request('https://shop.example.com/metrics/v1/identify', { method: 'POST', headers: BROWSER, body: '{}' })));
      await answered(() => handler(new Request('https://shop.example.com/metrics/agent.js')));
      await answered(() => fetch(`${shop.url}/metrics/v1/identify`, { method: 'POST', headers: BROWSER, body: '{}' }));
      await answered(() => fetch(`${shop.url}/metrics/agent.js`));
      expect(upstream.seen.map((s) => s.url)).toEqual(['/v1/identify', '/agent.js', '/v1/identify', '/agent.js']);
    } finally {
      await shop.close();
      await upstream.close();
    }
  });

  it('refuses options it cannot work with', () => {
    expect(() => createProxyHandler({ serviceUrl: 'ftp://x', secret: 's' })).toThrow(TypeError);
    expect(() => createProxyHandler({ serviceUrl: 'https://x', secret: '' })).toThrow(/secret is required/);
    expect(() => createProxyHandler({ serviceUrl: 'https://x', secret: 's', pathPrefix: '/' })).toThrow(/pathPrefix/);
    expect(() => createProxyMiddleware({ serviceUrl: 'https://x', secret: 's', cookieDomain: 'example.com; Secure' })).toThrow(/cookieDomain/);
  });
});
