// Property: no hostile request makes the service answer 5xx. Each run sends
// at least 5,000 requests over real HTTP to every route of the contract and
// every page: malformed and deeply nested JSON, wrong types, huge strings,
// invalid UTF-8, odd percent-escapes in paths, odd query strings, valid and
// forged keys, session cookies cookie-parser turns into JSON, corrupt or
// unknown content encodings and charsets, plus malformed HTTP on raw sockets.
// Requests carry real credentials often enough to get past authentication.
// fast-check prints the seed and the failing batch when it fails.
import { gzipSync } from 'node:zlib';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, type AuthKind } from '../../../contract/index.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

/** Batches per run, and requests per batch (sent concurrently). */
const RUNS = 520;
const BATCH = 10;
/** Safety bounds: a hang fails the property, and so does a run that takes too long. */
const REQUEST_TIMEOUT_MS = 15_000;
const RUN_TIME_LIMIT_MS = 240_000;

interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Status 0: closed without an answer (Node's parser refusing malformed HTTP, or a reset while a refused body was still being sent). */
interface Answer {
  status: number;
  what: string;
}

let h: Harness;
let served: Listening;
let c: Customer;
/** `spareSession` is the one random requests may end by signing out. */
const creds = { live: '', test: '', secret: '', session: '', spareSession: '', requestId: '', visitorId: '', userCode: '', deviceCode: '' };
const agent = new Agent({ keepAlive: true, maxSockets: BATCH });
const statuses = new Map<number, number>();

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":10000000}}' });
  served = await listenApp(h.app);
  c = await signUp(h);
  [creds.live, creds.test, creds.secret] = await Promise.all([c.key('live'), c.key('test'), c.key('secret')]);
  const email = (await c.agent.get('/api/account')).body.user.email;
  const session = async () => {
    const login = await c.agent.post('/api/auth/login').set('origin', c.origin).send({ email, password: 'correct horse battery' });
    return ([] as string[])
      .concat(login.headers['set-cookie'] ?? [])[0]!
      .split(';')[0]!
      .split('=')[1]!;
  };
  creds.session = await session();
  creds.spareSession = await session();
  const identified = await h
    .http()
    .post('/v1/identify')
    .set('x-api-key', creds.live)
    .send(identifyBody(deviceValues(1), { linkedId: 'order-1', tag: { a: 1 } }));
  creds.requestId = identified.body.requestId;
  creds.visitorId = identified.body.visitorId;
  const grant = await h.http().post('/api/cli/device-code').send({ client_name: 'fuzz' });
  creds.userCode = grant.body.user_code;
  creds.deviceCode = grant.body.device_code;
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await served?.close();
  await h?.close();
});

// ---- What is sent ----

interface Route {
  method: string;
  path: string;
  auth: AuthKind;
}

/** Every route of the contract (method, path template, authentication), and the pages. */
function routes(router: object): Route[] {
  return Object.values(router).flatMap((r: { method?: unknown; path?: unknown; metadata?: { auth: AuthKind } }) =>
    typeof r.method === 'string' && typeof r.path === 'string' ? [{ method: r.method, path: r.path, auth: r.metadata?.auth ?? 'public' }] : routes(r),
  );
}
const API_ROUTES = routes(contract);
/** Signing out would end the session the other requests use. */
const AUTHED_ROUTES = API_ROUTES.filter((r) => r.path !== '/api/auth/logout');
/** Identify and PATCH event take the richest bodies (signals, tag): picked more often. */
const BODY_ROUTES = API_ROUTES.filter((r) => r.path === '/v1/identify' || (r.method === 'PATCH' && r.path.startsWith('/v1/events/')));
const ROUTES: Route[] = [
  ...API_ROUTES,
  ...['/login', '/dashboard', '/cli/auth', '/assets/:name', '/agent.js', '/openapi.json', '/', '/nope/:x'].map((path) => ({
    method: 'GET',
    path,
    auth: 'session' as const,
  })),
];

/** The credentials a route asks for, so that hostile bodies get past authentication. */
const credentialsFor = (auth: AuthKind): Record<string, string> =>
  ({
    public: { origin: c.origin },
    browserKey: { 'x-api-key': Math.random() < 0.5 ? creds.live : creds.test },
    anyKey: { 'x-api-key': creds.test },
    secretKey: Math.random() < 0.5 ? { 'x-api-key': creds.secret } : { authorization: `Bearer ${creds.secret}` },
    session: { cookie: `deviceid_session=${creds.session}`, origin: c.origin },
    admin: { cookie: `deviceid_session=${creds.session}`, origin: c.origin },
  })[auth];

const HOSTILE_STRINGS = [
  '%',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%00',
  '%FF%FE',
  '..%2f..%2fetc%2fpasswd',
  '%25',
  '%u0041',
  '%%',
  '\u0000',
  '__proto__',
  'constructor',
  '$where',
  '{"$ne":null}',
  '<script>alert(1)</script>',
  '../../',
  'Ω'.repeat(5000),
  'x'.repeat(10_000),
  '\ud800',
  '🙂',
  ' ',
  '',
];
/** Percent-encodes every byte of the UTF-8 text (encodeURIComponent throws on lone surrogates). */
const pct = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

const hostileString = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string(), fc.string({ unit: 'binary' }), fc.string({ maxLength: 3000 }));

/** A path parameter: a real id sometimes, else something hostile, percent-encoded or raw. */
const param = fc.oneof(
  fc
    .constantFrom(
      () => creds.requestId,
      () => creds.visitorId,
      () => creds.userCode,
      () => c.projectId,
      () => 'login.js',
    )
    .map((f) => f()),
  fc.constantFrom(...HOSTILE_STRINGS.slice(0, 12)),
  hostileString.map(pct),
  fc.stringMatching(/^[A-Za-z0-9%._~-]{0,40}$/),
);

const numericExtreme = fc.oneof(
  fc.constantFrom(
    '281474976710656',
    '9007199254740993',
    '1e20',
    '2e308',
    '-1',
    '-0',
    '0.5',
    '1e-7',
    'Infinity',
    '-Infinity',
    '99999999999999999999999999',
    '0x7fffffff',
  ),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
);
const query = fc.oneof(
  fc.constant(''),
  fc
    .dictionary(
      fc.constantFrom('linkedId', 'limit', 'before', 'period', 'next', 'code', 'invite', '__proto__[x]', 'linkedId[$ne]', 'a[b][c][d]', 'limit[]'),
      hostileString,
      { maxKeys: 4 },
    )
    .map(
      (q) =>
        '?' +
        Object.entries(q)
          .map(([k, v]) => `${k}=${pct(v)}`)
          .join('&'),
    ),
  fc.constantFrom(
    '?limit=1e3',
    '?limit=-1',
    '?limit=0x10',
    '?limit=NaN',
    '?period=2026-13',
    '?next=%2F.%2F%2Fevil.example',
    '?before=%zz',
    '?%',
    '?a=%E0%A4%A',
  ),
  // Numeric extremes in every numeric query parameter (and the time cursors).
  fc.tuple(fc.constantFrom('start', 'end', 'limit', 'before'), numericExtreme).map(([k, v]) => `?${k}=${encodeURIComponent(v)}`),
);

/** Nests `depth` levels of arrays or objects around a value. */
const nested = (depth: number, leaf: string, object: boolean) =>
  object ? '{"a":'.repeat(depth) + leaf + '}'.repeat(depth) : '['.repeat(depth) + leaf + ']'.repeat(depth);

const validIdentify = () => identifyBody(deviceValues(Math.floor(Math.random() * 50)));
/** A JSON body: random JSON, a valid body with one field replaced, deep nesting, huge or invalid text. */
const deepJson = fc
  .tuple(fc.integer({ min: 1, max: 20_000 }), fc.boolean(), fc.constantFrom('tag', 'tag', 'signals', 'linkedId', 'client_name', 'root'))
  .map(([depth, object, where]) =>
    where === 'root'
      ? nested(depth, '1', object)
      : JSON.stringify({ ...validIdentify(), [where]: 0 }).replace(`"${where}":0`, `"${where}":${nested(depth, '1', object)}`),
  );
const jsonText = fc.oneof(
  fc.jsonValue({ depthSize: 'medium' }).map((v) => JSON.stringify(v)),
  fc
    .tuple(
      fc.constantFrom(
        'signals',
        'timestamp',
        'url',
        'referrer',
        'tag',
        'linkedId',
        'email',
        'password',
        'name',
        'device_code',
        'client_name',
        'plan',
        'allowedDomains',
        'type',
        'suspect',
        'projectId',
        'invitation',
        '__proto__',
      ),
      fc.oneof(fc.jsonValue(), hostileString),
    )
    .map(([field, value]) =>
      JSON.stringify({ ...validIdentify(), email: 'fuzz@example.com', password: 'quiet-otter-lantern-47', name: 'n', type: 'live', [field]: value }),
    ),
  { weight: 2, arbitrary: deepJson },
  fc.constantFrom(
    '',
    'null',
    '1',
    '"x"',
    '[]',
    '{',
    '{"signals":',
    '{"a":1}garbage',
    '\ufeff{}',
    `{"linkedId":"${'x'.repeat(250_000)}"}`,
    `"${'y'.repeat(300_000)}"`,
  ),
);
const body = fc.oneof(
  jsonText.map((t) => Buffer.from(t)),
  jsonText.map((t) => Buffer.concat([Buffer.from(t.slice(0, 20)), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from(t.slice(20))])),
  fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
);

const credential = (f: () => string) => fc.constant(null).map(f);
const headers = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=koi8-r',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/*',
      '',
    ),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'gzip, gzip', 'identity', 'x-unknown', 'GZIP'),
    'x-api-key': fc.oneof(
      credential(() => creds.live),
      credential(() => creds.test),
      credential(() => creds.secret),
      hostileString,
      fc.constantFrom('svc_live_' + 'a'.repeat(38), 'Bearer x'),
    ),
    authorization: fc.oneof(
      credential(() => `Bearer ${creds.secret}`),
      credential(() => `Bearer ${creds.live}`),
      hostileString.map((s) => `Bearer ${s}`),
      fc.constantFrom('Basic Og==', 'Bearer', ''),
    ),
    cookie: fc.oneof(
      credential(() => `deviceid_session=${creds.spareSession}`),
      fc.constantFrom(
        'deviceid_session=j%3A%7B%22a%22%3A1%7D',
        'deviceid_session=j:["a"]',
        'deviceid_session=j:1',
        'deviceid_session=s:x.y',
        'deviceid_session=%',
        'deviceid_session=%E0%A4%A',
        '__proto__=1',
        'deviceid_known=j:{}',
        'a=1; a=2; deviceid_session=x',
      ),
      hostileString.map((s) => `deviceid_session=${pct(s)}`),
    ),
    origin: fc.oneof(
      credential(() => c.origin),
      fc.constantFrom('https://evil.example', 'null', ''),
    ),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', '::1, 10.0.0.1', 'not-an-ip', '', Array(1000).fill('1.1.1.1').join(',')),
    'user-agent': fc.oneof(
      fc.constantFrom('Mozilla/5.0 (X11) Safari/1 ' + 'Version/1.1'.repeat(1000), 'curl/8.0', ''),
      hostileString.map((s) => s.slice(0, 1000)),
    ),
  },
  { requiredKeys: [] },
);

/** Compresses a body as its Content-Encoding says, or corrupts or truncates it. */
const encoded = fc.tuple(fc.constantFrom('as said', 'corrupt', 'truncated'), body).map(([how, b]) => ({ how, b }));

/** Anything: any route, method, headers and body. */
const anyRequest: fc.Arbitrary<HostileRequest> = fc
  .tuple(
    fc.constantFrom(...ROUTES),
    fc.array(param, { minLength: 3, maxLength: 3 }),
    query,
    headers,
    fc.option(encoded, { nil: undefined }),
    fc.constantFrom('route', 'route', 'route', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  )
  .map(([route, params, q, hdrs, enc, methodChoice]) => {
    let i = 0;
    // http.request refuses characters a request line cannot hold; the raw requests below send those.
    const path = (route.path.replace(/:[A-Za-z]+/g, () => params[i++]!) + q).replace(/[^\x21-\x7e]/gu, pct);
    const headersOut: Record<string, string> = {};
    // Only valid header values can be sent through http.request; others go through raw sockets below.
    for (const [k, v] of Object.entries(hdrs)) if (/^[\t\x20-\x7e]*$/.test(v)) headersOut[k] = v;
    let payload = enc?.b;
    if (payload && headersOut['content-encoding'] && /gzip|deflate/i.test(headersOut['content-encoding'])) {
      const zipped = gzipSync(payload);
      payload =
        enc!.how === 'as said' && /gzip/i.test(headersOut['content-encoding'])
          ? zipped
          : enc!.how === 'truncated'
            ? zipped.subarray(0, zipped.length >> 1)
            : Buffer.from('not compressed at all');
    } else if (payload) delete headersOut['content-encoding'];
    return { method: methodChoice === 'route' ? route.method : methodChoice, path, headers: headersOut, body: payload };
  });

/** A route with the credentials it asks for and a hostile JSON body: what reaches validation and the handlers. */
const authedRequest: fc.Arbitrary<HostileRequest> = fc
  .tuple(
    fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...BODY_ROUTES) }, { weight: 2, arbitrary: fc.constantFrom(...AUTHED_ROUTES) }),
    fc.array(fc.oneof({ weight: 3, arbitrary: param.filter((p) => !p.startsWith('%')) }, { weight: 1, arbitrary: param }), { minLength: 3, maxLength: 3 }),
    query,
    jsonText,
    fc.constantFrom(undefined, 'gzip', 'deflate'),
  )
  .map(([route, params, q, text, encoding]) => {
    let i = 0;
    const path = (route.path.replace(/:[A-Za-z]+/g, () => params[i++]!) + q).replace(/[^\x21-\x7e]/gu, pct);
    const plain = Buffer.from(text);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...credentialsFor(route.auth) };
    if (encoding) headers['content-encoding'] = encoding;
    const payload = encoding === 'gzip' ? gzipSync(plain) : encoding === 'deflate' ? plain.subarray(0, 10) : plain;
    return { method: route.method, path, headers, body: route.method === 'GET' ? undefined : payload };
  });

/** Malformed HTTP that no client library would send, on a raw socket. */
const rawRequest = fc
  .tuple(
    fc.constantFrom('GET', 'POST', 'PATCH', 'FOO', 'GET GET'),
    fc.oneof(
      fc.constantFrom(...ROUTES.map((r) => r.path.replace(/:[A-Za-z]+/g, '%zz'))),
      fc.constantFrom('*', 'http://evil.example/', '/\u00ff\u0000', '/' + 'a'.repeat(20_000)),
    ),
    fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/9.9', ''),
    fc.constantFrom(
      'X-API-Key: svc_\u00ff\u00fe\r\n',
      'Cookie: deviceid_session=\u00ff\u0001\r\n',
      'Content-Length: 5\r\nContent-Length: 6\r\n',
      'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n',
      'Transfer-Encoding: chunked\r\n',
      'Content-Length: -1\r\n',
      'X-Folded: a\r\n b\r\n',
      `X-Big: ${'h'.repeat(20_000)}\r\n`,
      'Authorization: Bearer svc_secret_\u0000\r\n',
      '',
    ),
    fc.constantFrom('', '{}', 'zz\r\n{}\r\n0\r\n\r\n', '\u00ff\u00fe'),
  )
  .map(([method, path, version, header, payload]) => `${method} ${path} ${version}\r\nHost: x\r\n${header}Connection: close\r\n\r\n${payload}`);

// ---- How it is sent ----

function send(r: HostileRequest): Promise<Answer> {
  const url = new URL(served.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers, agent, timeout: REQUEST_TIMEOUT_MS },
      (res) => {
        res.resume();
        // 'close' also comes when the server cuts the body short, which 'end' would not.
        res.on('error', () => undefined);
        res.on('close', () => resolve({ status: res.statusCode ?? 0, what: `${r.method} ${r.path.slice(0, 200)}` }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms: ${r.method} ${r.path.slice(0, 200)}`)));
    req.on('error', (err) => {
      // The server may close after answering a refused body early (413, 415, 400); that is an answer, not a failure.
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || (err as NodeJS.ErrnoException).code === 'EPIPE') resolve({ status: 0, what: 'closed' });
      else reject(err);
    });
    req.end(r.body);
  });
}

function sendRaw(text: string): Promise<Answer> {
  const url = new URL(served.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy(new Error(`raw request not answered: ${text.slice(0, 80)}`)));
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve({ status: 0, what: 'closed' }) : reject(err)));
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0), what: text.slice(0, 80) }));
    socket.end(Buffer.from(text, 'latin1'));
  });
}

describe('hostile requests', () => {
  it(`never answer 5xx: ${RUNS * BATCH} requests a run across every route`, async () => {
    let sent = 0;
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ weight: 10, arbitrary: anyRequest }, { weight: 9, arbitrary: authedRequest }, { weight: 1, arbitrary: rawRequest }), {
          minLength: BATCH,
          maxLength: BATCH,
        }),
        async (batch) => {
          const answers = await Promise.all(batch.map((r) => (typeof r === 'string' ? sendRaw(r) : send(r))));
          sent += answers.length;
          for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
          const failed = answers.filter((a) => a.status >= 500);
          expect(failed, failed.map((a) => `${a.status} ${a.what}`).join('\n')).toEqual([]);
        },
      ),
      // No shrinking: a failing batch already names its failing requests, and
      // re-sending large bodies to shrink would take minutes. Bounded in time.
      { numRuns: RUNS, endOnFailure: true, interruptAfterTimeLimit: RUN_TIME_LIMIT_MS, markInterruptAsFailure: true },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`fuzz: ${sent} requests in ${seconds} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    expect(sent).toBeGreaterThanOrEqual(5_000);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    // The service is still well after the run: a new connection (a pooled one may be one the server just closed after a refusal).
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
  }, 600_000);
});
