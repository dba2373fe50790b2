// The inputs the 2026-11 security audit found answering 500, each answered
// as a client error now, and the error handler's rules: any error carrying a
// 4xx status keeps it, a true 500 is logged once with its request id, a 4xx
// logs one short line. Also the response headers every answer carries, and a
// `tag` that round-trips every key, `__proto__` included.
import { gzipSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import request from 'supertest';
import type { ZodTypeAny } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, UNIX_MS_MAX } from '../../../contract/index.js';
import { LIMITS } from '../../../contract/identify.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let c: Customer;
let live: string;
let secret: string;
let requestId: string;
let visitorId: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  // A list whose entries route takes a numeric limit.
  await request(h.app).post('/v1/lists').set('authorization', `Bearer ${secret}`).send({ name: 'hostile', kind: 'ip' });
  const res = await h
    .http()
    .post('/v1/identify')
    .set('x-api-key', live)
    .send(identifyBody(deviceValues(1)));
  expect(res.status).toBe(200);
  requestId = res.body.requestId;
  visitorId = res.body.visitorId;
});
afterAll(async () => {
  await h.close();
});

/** The log lines written while `fn` runs, parsed. */
async function logged(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const before = h.logs().length;
  await fn();
  return h
    .logs()
    .slice(before)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** `depth` arrays nested inside each other, as JSON text. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('malformed percent-escapes in the path are 400', () => {
  it.each([
    ['get', '/v1/events/%zz'],
    ['patch', '/v1/events/%E0%A4%A'],
    ['get', '/v1/demo/visits/%E0%A4%A'],
    ['get', '/api/projects/%C0%AF/keys'],
    ['delete', '/api/projects/%zz/keys/%zz'],
    ['get', '/api/cli/grants/%E0%A4%A'],
    ['post', '/api/cli/grants/%E0%A4%A/deny'],
    ['get', '/assets/%'],
  ] as const)('%s %s', async (method, path) => {
    const res = await request(h.app)[method](path).set('authorization', `Bearer ${secret}`).set('x-api-key', secret);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Malformed percent-escape in the URL path', code: expect.any(String) });
  });
});

describe('numeric query parameters: every value out of bounds or not in decimal digits is 400 naming the parameter, never 5xx', () => {
  interface NumericParam {
    method: string;
    path: string;
    auth: string;
    name: string;
    min: number;
    max: number;
  }
  const unwrap = (t: ZodTypeAny): ZodTypeAny => {
    const d = t._def as { innerType?: ZodTypeAny; schema?: ZodTypeAny };
    return d.innerType ? unwrap(d.innerType) : d.schema ? unwrap(d.schema) : t;
  };
  const routes = (r: object): { method: string; path: string; query?: ZodTypeAny; metadata?: { auth: string } }[] =>
    Object.values(r).flatMap((x) => (typeof x.method === 'string' ? [x] : routes(x)));
  // Every integer of every route's query, with its bounds, read from the contract.
  const numeric: NumericParam[] = routes(contract).flatMap((r) =>
    r.query
      ? Object.entries((unwrap(r.query) as unknown as { shape: Record<string, ZodTypeAny> }).shape).flatMap(([name, t]) => {
          const inner = unwrap(t);
          if (inner._def.typeName !== 'ZodNumber') return [];
          const checks = inner._def.checks as { kind: string; value: number }[];
          return [
            {
              method: r.method,
              path: r.path,
              auth: r.metadata!.auth,
              name,
              min: checks.find((c) => c.kind === 'min')?.value ?? -Infinity,
              max: checks.find((c) => c.kind === 'max')?.value ?? Infinity,
            },
          ];
        })
      : [],
  );
  // The visit-history cursors take a visit id or a Unix ms time in the same digits.
  const cursors: NumericParam[] = routes(contract)
    .filter((r) => r.query && 'before' in (unwrap(r.query) as unknown as { shape: object }).shape)
    .map((r) => ({ method: r.method, path: r.path, auth: r.metadata!.auth, name: 'before', min: 0, max: UNIX_MS_MAX }));

  it('finds them all in the contract', () => {
    expect(numeric.map((p) => `${p.path} ${p.name} ${p.min}..${p.max}`)).toEqual([
      '/v1/events minSuspectScore 0..100',
      `/v1/events start 0..${UNIX_MS_MAX}`,
      `/v1/events end 0..${UNIX_MS_MAX}`,
      '/v1/events limit 1..100',
      '/v1/visitors/:visitorId/related limit 1..50',
      '/api/projects/:projectId/events minSuspectScore 0..100',
      `/api/projects/:projectId/events start 0..${UNIX_MS_MAX}`,
      `/api/projects/:projectId/events end 0..${UNIX_MS_MAX}`,
      '/api/projects/:projectId/events limit 1..100',
      `/api/projects/:projectId/hourly end 0..${UNIX_MS_MAX}`,
      '/api/projects/:projectId/hourly hours 1..48',
      '/api/projects/:projectId/visitors/:visitorId/related limit 1..50',
      `/api/accounts/:accountId/audit start 0..${UNIX_MS_MAX}`,
      `/api/accounts/:accountId/audit end 0..${UNIX_MS_MAX}`,
      '/api/accounts/:accountId/audit limit 1..100',
      '/v1/lists/:name/entries limit 1..1000',
      '/v1/reviews limit 1..100',
      `/v1/labels since 0..${2 ** 48}`,
      '/api/projects/:projectId/lists/:name/entries limit 1..1000',
      '/api/projects/:projectId/reviews limit 1..100',
      `/api/projects/:projectId/labels since 0..${2 ** 48}`,
    ]);
    expect(cursors.map((p) => p.path)).toEqual(['/v1/demo/visits/:visitorId', '/api/visitors/:visitorId']);
  });

  const send = (p: NumericParam, value: string) => {
    const path = p.path.replace(':projectId', c.projectId).replace(':visitorId', visitorId).replace(':accountId', c.accountId).replace(':name', 'hostile');
    const url = `${path}?${p.name}=${encodeURIComponent(value)}`;
    const req = p.auth === 'session' ? c.agent.get(url) : request(h.app).get(url);
    return req.set('authorization', `Bearer ${secret}`).set('x-api-key', secret);
  };
  const wellFormed = (p: NumericParam, v: string) => /^-?\d+(\.\d+)?$/.test(v) && Number.isInteger(Number(v)) && Number(v) >= p.min && Number(v) <= p.max;
  const values = (p: NumericParam) =>
    fc.oneof(
      fc.integer({ min: p.min, max: Math.min(p.max, Number.MAX_SAFE_INTEGER) }).map(String),
      fc.constantFrom(String(p.min), String(p.max), String(p.max + 1), String(p.min - 1)),
      fc.integer({ min: -1e9, max: -1 }).map(String),
      fc.double().map(String), // fractions, exponents (1e+21), Infinity, NaN, -0
      fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
      fc.constantFrom('281474976710656', '9007199254740993', '1e20', '1e3', '2e308', '0x10', '0b1', ' 1', '1 ', '+5', '', '1_000', '.5', '5.', '١٢'),
    );

  it.each([...numeric, ...cursors].map((p) => [`${p.path} ${p.name}`, p] as const))('%s', async (_name, p) => {
    await fc.assert(
      fc.asyncProperty(values(p), async (v) => {
        const res = await send(p, v);
        // A visit id is the cursor's other form: junk is refused with the cursor's own text.
        const ok = p.name === 'before' ? /^\d{1,15}$/.test(v) && Number(v) <= p.max : wellFormed(p, v);
        expect(res.status, `${p.name}=${v}`).toBe(ok ? 200 : 400);
        if (!ok) expect(res.body.error, `${p.name}=${v}`).toMatch(new RegExp(`^${p.name}: `));
      }),
      { numRuns: 60 },
    );
  });
});

describe('corrupt compressed bodies are 400 on every JSON route', () => {
  const routes: [string, string][] = [
    ['post', '/v1/identify'],
    ['patch', `/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z`],
    ['post', '/api/cli/device-code'],
    ['post', '/api/cli/token'],
    ['post', '/api/auth/login'],
    ['post', '/api/auth/signup'],
    ['post', '/api/projects'],
  ];
  const json = Buffer.from(JSON.stringify({ device_code: 'x'.repeat(64) }));
  const bodies: [string, string, Buffer][] = [
    ['gzip', 'not gzip', Buffer.from('not gzip')],
    ['gzip', 'truncated', gzipSync(json).subarray(0, 12)],
    ['deflate', 'corrupt', Buffer.from([0x78, 0x9c, 0xff, 0xff, 0x00])],
    ['deflate', 'truncated', deflateSync(json).subarray(0, 6)],
  ];
  it.each(routes.flatMap(([m, p]) => bodies.map(([enc, what, body]) => [m, p, enc, what, body] as const)))(
    '%s %s with %s (%s)',
    async (method, path, encoding, _what, body) => {
      const res = await (request(h.app) as unknown as Record<string, (p: string) => request.Test>)[method]!(path)
        .set('content-type', 'application/json')
        .set('content-encoding', encoding)
        .set('x-api-key', live)
        .set('authorization', `Bearer ${secret}`)
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Malformed compressed body', code: expect.any(String) });
    },
  );
});

describe('session cookies that cookie-parser turns into JSON are no session', () => {
  const cookies = ['j%3A%7B%22a%22%3A1%7D', 'j:["a"]', 'j:1', 'j:null', 'j:"x"'];
  it.each(cookies)('%s: 401 on the API, 303 to sign-in on pages, the sign-in page itself 200', async (value) => {
    const cookie = `deviceid_session=${value}`;
    expect((await h.http().get('/api/account').set('cookie', cookie)).status).toBe(401);
    expect((await h.http().get('/api/projects').set('cookie', cookie)).status).toBe(401);
    expect((await h.http().get('/api/cli/grants/BCDF-GHJK').set('cookie', cookie)).status).toBe(401);
    expect((await h.http().get('/dashboard').set('cookie', cookie)).status).toBe(303);
    expect((await h.http().get('/cli/auth?code=BCDF-GHJK').set('cookie', cookie)).status).toBe(303);
    expect((await h.http().get('/login?next=%2Fdashboard').set('cookie', cookie)).status).toBe(200);
  });
});

describe('tag nesting is bounded', () => {
  const deepTag = (depth: number) => `{"a":${nested(depth - 1)}}`;
  const identifyText = (tag: string) => JSON.stringify(identifyBody(deviceValues(2))).replace(/}$/, `,"tag":${tag}}`);

  it(`accepts ${LIMITS.tagDepth} levels on identify and refuses ${LIMITS.tagDepth + 1} with 400 naming the field`, async () => {
    const ok = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', live)
      .set('content-type', 'application/json')
      .send(identifyText(deepTag(LIMITS.tagDepth)));
    expect(ok.status).toBe(200);
    const deep = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', live)
      .set('content-type', 'application/json')
      .send(identifyText(deepTag(LIMITS.tagDepth + 1)));
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({ error: `tag: must nest at most ${LIMITS.tagDepth} levels deep`, code: expect.any(String) });
  });

  it('answers 400, not a stack overflow, for a tag thousands of levels deep (8 KB)', async () => {
    for (const depth of [4_200, 60_000]) {
      const res = await h
        .http()
        .post('/v1/identify')
        .set('x-api-key', live)
        .set('content-type', 'application/json')
        .send(identifyText(deepTag(depth)));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^tag: must nest at most/);
      const patch = await h
        .http()
        .patch(`/v1/events/${requestId}`)
        .set('authorization', `Bearer ${secret}`)
        .set('content-type', 'application/json')
        .send(`{"tag":${deepTag(depth)}}`);
      expect(patch.status).toBe(400);
      expect(patch.body.error).toMatch(/^tag: must nest at most/);
    }
  });

  it('keeps refusing a tag over 16 KB', async () => {
    const res = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', live)
      .send(identifyBody(deviceValues(3), { tag: { pad: 'x'.repeat(LIMITS.tagBytes) } }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`tag: must serialize to at most ${LIMITS.tagBytes} bytes of JSON`);
  });
});

describe('tag keys round-trip unchanged, __proto__ included', () => {
  const tagText = '{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}},"keep":1,"a.b":2,"$x":3}';

  it('on identify and on PATCH, without touching any prototype', async () => {
    const text = JSON.stringify(identifyBody(deviceValues(4))).replace(/}$/, `,"tag":${tagText}}`);
    const res = await h.http().post('/v1/identify').set('x-api-key', live).set('content-type', 'application/json').send(text);
    expect(res.status).toBe(200);
    const event = await h.http().get(`/v1/events/${res.body.requestId}`).set('authorization', `Bearer ${secret}`);
    expect(event.status).toBe(200);
    // The raw text: a parsed object would hide an own `__proto__` key.
    expect(event.text).toContain(`"tag":${tagText}`);

    const patched = await h
      .http()
      .patch(`/v1/events/${requestId}`)
      .set('authorization', `Bearer ${secret}`)
      .set('content-type', 'application/json')
      .send('{"tag":{"__proto__":{"polluted":true}}}');
    expect(patched.status).toBe(200);
    expect(patched.text).toContain('"tag":{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('x');
  });
});

describe('the error handler', () => {
  it('logs a 4xx as one short line without an error or stack', async () => {
    const lines = await logged(() => h.http().get('/v1/events/%zz'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, res: { statusCode: 400 } });
    expect(lines[0]).not.toHaveProperty('err');
  });

  it('honours the status of any error carrying a 4xx (here 413 from the body parser, 415 for an unknown encoding)', async () => {
    const big = await h
      .http()
      .post('/api/cli/token')
      .set('content-type', 'application/json')
      .send(`"${'x'.repeat(LIMITS.bodyBytes)}"`);
    expect(big.status).toBe(413);
    const br = await h.http().post('/api/cli/token').set('content-type', 'application/json').set('content-encoding', 'br').send('{}');
    expect(br.status).toBe(415);
    expect(br.body).toEqual({ error: 'Unsupported content encoding or charset', code: expect.any(String) });
  });

  it('logs a true 500 exactly once, at error level, with the request id and the stack', async () => {
    const events = h.store.events;
    const original = events.get;
    events.get = () => Promise.reject(new Error('simulated bug'));
    let res;
    let lines;
    try {
      lines = await logged(async () => {
        res = await h.http().get(`/v1/events/${requestId}`).set('authorization', `Bearer ${secret}`);
      });
    } finally {
      events.get = original;
    }
    const incident = res!.headers['x-request-id'];
    expect(res!.status).toBe(500);
    expect(res!.body).toEqual({ error: `Internal error (incident ${incident})`, code: expect.any(String) });
    const errors = lines.filter((l) => (l.level as number) >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ req: { id: incident }, err: { message: 'simulated bug' } });
    expect((errors[0]!.err as { stack: string }).stack).toMatch(/simulated bug\n\s+at /);
  });
});

describe('response headers', () => {
  it('every answer carries X-Content-Type-Options: nosniff', async () => {
    for (const path of ['/healthz', '/openapi.json', '/nope', '/login', '/api/account']) {
      expect((await h.http().get(path)).headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('answers that carry a secret are never stored: new keys, sessions, device-flow codes', async () => {
    const key = await c.agent.post(`/api/projects/${c.projectId}/keys`).set('origin', c.origin).send({ name: 'k', type: 'live' });
    expect(key.status).toBe(201);
    expect(key.headers['cache-control']).toBe('no-store');
    const session = await request(h.app)
      .post('/api/auth/signup')
      .set('origin', c.origin)
      .send({ email: `nostore-${Date.now()}@example.com`, password: 'quiet-otter-lantern-47' });
    expect(session.status).toBe(201);
    expect(session.headers['cache-control']).toBe('no-store');
    const code = await h.http().post('/api/cli/device-code').send({ client_name: 'tool' });
    expect(code.status).toBe(200);
    expect(code.headers['cache-control']).toBe('no-store');
  });
});
