// Timeouts, retries and backoff of deviceid/client against real HTTP servers
// on 127.0.0.1 that answer like a struggling service or proxy: 429 with
// Retry-After, 503, hung responses, reset connections, redirects.
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AbortedError,
  createIdentifyClient,
  createServerClient,
  NetworkError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  type IdentifyRequest,
} from '../../../clients/node/index.js';
import { json, scripted, type Listening, type Script } from '../../support/httpServer.js';

const SECRET = 'svc_secret_TESTtestTESTtestTESTtestTESTtest123456';
const LIVE = 'svc_live_TESTtestTESTtestTESTtestTESTtest123456';
const EVENT = { requestId: 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z', visitorId: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' };
const REQ = 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z';
const BODY = { signals: {}, timestamp: 1 } as unknown as IdentifyRequest;

const servers: Listening[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: Script) {
  const s = await scripted(script);
  servers.push(s);
  return s;
}

const fast = { backoff: { baseDelayMs: 20, maxDelayMs: 100 } };
const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('retries of idempotent calls', () => {
  it('retries a GET through 503, 503 to the 200', async () => {
    const s = await serve((_r, n, res) => (n < 2 ? json(res, 503, { error: 'busy' }) : json(res, 200, EVENT)));
    const client = createServerClient({ baseUrl: s.url, secretKey: SECRET, retries: 2, backoff: { baseDelayMs: 1, maxDelayMs: 1 } });
    const event = await client.getEvent(REQ);
    expect(event).toEqual(EVENT);
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill(`GET /v1/events/${REQ}`));
  });

  it('gives up after `retries` more attempts with ServerError carrying status, body and attempts', async () => {
    const s = await serve((_r, _n, res) => json(res, 503, { error: 'Service unavailable' }, { 'x-request-id': 'rid_1' }));
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, retries: 3, ...fast }).getEvent(REQ));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 503, code: 'server', attempts: 4, body: { error: 'Service unavailable' }, requestId: 'rid_1' });
    expect(s.seen).toHaveLength(4);
  });

  it('honours Retry-After on 429: the retry comes no sooner, then succeeds', async () => {
    const s = await serve((_r, n, res) =>
      n === 0 ? json(res, 429, { error: 'Rate limit exceeded', usage: 11, limit: 10 }, { 'retry-after': '1' }) : json(res, 200, EVENT),
    );
    const client = createServerClient({ baseUrl: s.url, secretKey: SECRET, backoff: { baseDelayMs: 1, maxDelayMs: 1 } });
    expect(await client.getEvent(REQ)).toEqual(EVENT);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1]!.at - s.seen[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('does not wait out a Retry-After longer than maxRetryAfterMs: RateLimitError at once', async () => {
    const s = await serve((_r, _n, res) => json(res, 429, { error: 'Monthly API call limit exceeded', usage: 3, limit: 3 }, { 'retry-after': '120' }));
    const started = Date.now();
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, maxRetryAfterMs: 60_000 }).getEvent(REQ));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, usage: 3, limit: 3, retryAfter: 120, attempts: 1 });
    expect(s.seen).toHaveLength(1);
  });

  it('retries a GET whose connection is reset, and reports NetworkError when it keeps happening', async () => {
    const flaky = await serve((_r, n, res) => (n === 0 ? res.socket!.destroy() : json(res, 200, EVENT)));
    expect(await createServerClient({ baseUrl: flaky.url, secretKey: SECRET, ...fast }).getEvent(REQ)).toEqual(EVENT);
    expect(flaky.seen).toHaveLength(2);

    const broken = await serve((_r, _n, res) => res.socket!.destroy());
    const err = await caught(createServerClient({ baseUrl: broken.url, secretKey: SECRET, retries: 1, ...fast }).getEvent(REQ));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'network', status: undefined, attempts: 2 });
    expect(broken.seen).toHaveLength(2);
  });
});

describe('timeouts', () => {
  it('times out a request that never answers, per attempt, and retries a GET', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const started = Date.now();
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, timeoutMs: 300, retries: 1, ...fast }).getEvent(REQ));
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: 'timeout', attempts: 2, request: `GET /v1/events/${REQ}` });
    expect((err as Error).message).toBe(`GET /v1/events/${REQ} timed out after 300 ms`);
    expect(s.seen).toHaveLength(2);
    expect(took).toBeGreaterThanOrEqual(600);
    expect(took).toBeLessThan(3000);
  });

  it('times out a response whose body never ends', async () => {
    const s = await serve((_r, _n, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"requestId":');
    });
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, timeoutMs: 300, retries: 0 }).getEvent(REQ));
    expect(err).toBeInstanceOf(TimeoutError);
  });

  it('a per-call timeout overrides the client default', async () => {
    const s = await serve(() => {});
    const started = Date.now();
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, timeoutMs: 60_000 }).getEvent(REQ, { timeoutMs: 200, retries: 0 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('calls that must not be replayed', () => {
  it('never retries identify on 503, a reset connection or a timeout', async () => {
    for (const script of [
      ((_r, _n, res) => json(res, 503, { error: 'busy' })) as Script,
      ((_r, _n, res) => res.socket!.destroy()) as Script,
      (() => {}) as Script,
    ]) {
      const s = await serve(script);
      const err = await caught(createIdentifyClient({ baseUrl: s.url, apiKey: LIVE, timeoutMs: 300, retries: 5, ...fast }).identify(BODY));
      expect([ServerError, NetworkError, TimeoutError].some((E) => err instanceof E)).toBe(true);
      expect(s.seen).toHaveLength(1);
    }
  });

  it('never retries updateEvent on 500', async () => {
    const s = await serve((_r, _n, res) => json(res, 500, { error: 'Internal error (incident rid_x)' }));
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, retries: 5, ...fast }).updateEvent(REQ, { suspect: true }));
    expect(err).toBeInstanceOf(ServerError);
    expect(s.seen).toHaveLength(1);
    expect(s.seen[0]!.method).toBe('PATCH');
    expect(JSON.parse(s.seen[0]!.body)).toEqual({ suspect: true });
  });

  it('does retry identify on 429, which the service answers before doing any work', async () => {
    const s = await serve((_r, n, res) =>
      n === 0 ? json(res, 429, { error: 'Rate limit exceeded', usage: 11, limit: 10 }, { 'retry-after': '0' }) : json(res, 200, EVENT),
    );
    expect(await createIdentifyClient({ baseUrl: s.url, apiKey: LIVE, ...fast }).identify(BODY)).toEqual(EVENT);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[0]!.body).toBe(s.seen[1]!.body);
  });
});

describe('abort', () => {
  it('rejects with AbortedError while waiting between retries, without another attempt', async () => {
    const s = await serve((_r, _n, res) => json(res, 503, { error: 'busy' }, { 'retry-after': '5' }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('user cancelled')), 200);
    const started = Date.now();
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET }).getEvent(REQ, { signal: ac.signal }));
    expect(err).toBeInstanceOf(AbortedError);
    expect((err as AbortedError).cause).toEqual(new Error('user cancelled'));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(s.seen).toHaveLength(1);
  });

  it('rejects with AbortedError (not TimeoutError) during a hung request', async () => {
    const s = await serve(() => {});
    const started = Date.now();
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET }).getEvent(REQ, { signal: AbortSignal.timeout(200) }));
    expect(err).toBeInstanceOf(AbortedError);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('requests as sent', () => {
  it('sends the secret key as Bearer on every server route, visits included', async () => {
    const s = await serve((r, _n, res) => json(res, 200, r.url.startsWith('/v1/demo') ? { visits: [], totalVisits: 0, firstSeenAt: 0 } : { events: [] }));
    const client = createServerClient({ baseUrl: s.url, secretKey: SECRET });
    await client.searchEvents({ linkedId: 'a b&c=d', limit: 5 });
    await client.getVisits('iq_1', { before: 1700000000000 });
    expect(s.seen[0]).toMatchObject({ url: '/v1/events?linkedId=a%20b%26c%3Dd&limit=5' });
    expect(s.seen[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(s.seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(s.seen[1]).toMatchObject({ url: '/v1/demo/visits/iq_1?before=1700000000000' });
    expect(s.seen[1]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(s.seen[1]!.headers['x-api-key']).toBeUndefined();
    expect(s.seen[1]!.headers['user-agent']).toMatch(/^deviceid-node\//);
  });

  it('encodes path parameters, so an id cannot step into another route', async () => {
    const s = await serve((_r, _n, res) => json(res, 200, EVENT));
    await createServerClient({ baseUrl: `${s.url}/`, secretKey: SECRET }).getEvent('../../v1/identify?x=1');
    expect(s.seen[0]!.url).toBe('/v1/events/..%2F..%2Fv1%2Fidentify%3Fx%3D1');
  });

  it('uses the fetch it is given', async () => {
    const s = await serve((_r, _n, res) => json(res, 200, EVENT));
    const urls: string[] = [];
    const client = createServerClient({
      baseUrl: s.url,
      secretKey: SECRET,
      fetch: (url, init) => {
        urls.push(`${init.method} ${url}`);
        return fetch(url, init);
      },
    });
    await client.getEvent(REQ);
    expect(urls).toEqual([`GET ${s.url}/v1/events/${REQ}`]);
  });

  it('does not follow redirects (the key would travel with them)', async () => {
    const target = await serve((_r, _n, res) => json(res, 200, EVENT));
    const s = await serve((_r, _n, res) => {
      res.writeHead(307, { location: `${target.url}/v1/events/${REQ}` });
      res.end();
    });
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET }).getEvent(REQ));
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain(`redirected (307) to ${target.url}`);
    expect(target.seen).toHaveLength(0);
  });

  it('maps a status the contract does not declare to UnexpectedResponseError, key-free', async () => {
    const s = await serve((_r, _n, res) => json(res, 418, { error: 'teapot' }));
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET }).getEvent(REQ));
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect(err).toMatchObject({ status: 418, body: { error: 'teapot' } });
    expect(inspect(err, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
  });

  it('with validateResponses, refuses a body that breaks the contract', async () => {
    const s = await serve((_r, _n, res) => json(res, 200, { requestId: 'nope' }));
    const err = await caught(createServerClient({ baseUrl: s.url, secretKey: SECRET, validateResponses: true }).getEvent(REQ));
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toMatch(/does not match the contract \(requestId: /);
  });
});
