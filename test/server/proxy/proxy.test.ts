// The first-party proxy, service side, over real HTTP on the real database:
// the dashboard's proxy secret (created, shown once, rotated with a 24-hour
// overlap, revoked) and traffic figures, with every status; a proxied
// identify (the proxy's headers believed only with a valid secret, the
// device cookie set and then recognised without the agent's token, a forged,
// altered or another project's cookie ignored, a wrong or revoked secret 401,
// edge analysis on the forwarded address); the linking rule between the
// agent's token and the cookie.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_S, PROXY_HEADERS, PROXY_ROTATION_OVERLAP_MS } from '../../../contract/proxy.js';
import { DeviceCookies } from '../../../server/proxy/cookie.js';
import { chooseToken, tokensToPoint, visitTokens } from '../../../server/identification/service.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, withoutToken } from '../../support/signals.js';

let h: Harness;
let c: Customer;
let live: string;
let secretKey: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  c = await signUp(h);
  live = await c.key('live');
  secretKey = await c.key('secret');
});
afterAll(async () => {
  await h.close();
});

const proxyPath = (projectId = c.projectId) => `/api/projects/${projectId}/proxy`;
async function newSecret(customer = c, projectId = customer.projectId): Promise<string> {
  const res = await customer.agent
    .post(`${proxyPath(projectId)}/secret`)
    .set('origin', customer.origin)
    .send({});
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.secret as string;
}

interface ProxiedOptions {
  secret?: string | null;
  ip?: string;
  host?: string;
  proto?: string;
  cookie?: string;
  key?: string;
  extra?: Record<string, string>;
}

/** An identify as a first-party proxy forwards it (a browser at `ip` on https://shop.example.com). */
function proxied(body: object, o: ProxiedOptions = {}) {
  const r = request(h.app)
    .post('/v1/identify')
    .set('x-api-key', o.key ?? live)
    .set('origin', 'https://shop.example.com')
    .set('user-agent', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36');
  if (o.secret !== null && o.secret !== undefined) r.set(PROXY_HEADERS.secret, o.secret);
  r.set(PROXY_HEADERS.clientIp, o.ip ?? '81.2.69.142')
    .set(PROXY_HEADERS.host, o.host ?? 'shop.example.com')
    .set(PROXY_HEADERS.proto, o.proto ?? 'https');
  if (o.cookie) r.set('cookie', o.cookie);
  for (const [k, v] of Object.entries(o.extra ?? {})) r.set(k, v);
  return r.send(body);
}

/** The device cookie the answer sets: its `name=value` and attributes. */
function setCookie(res: { headers: Record<string, unknown> }): { pair: string; value: string; attributes: string[] } | null {
  const raw = res.headers['set-cookie'] as string[] | undefined;
  const line = raw?.find((l) => l.startsWith(`${DEVICE_COOKIE}=`));
  if (!line) return null;
  const [pair, ...attributes] = line.split(/;\s*/);
  return { pair: pair!, value: pair!.slice(DEVICE_COOKIE.length + 1), attributes };
}

const cookieTokenHash = (value: string) =>
  createHash('sha256')
    .update(`cookie:${value.split('.')[1]}`)
    .digest('base64url');

describe('dashboard: the proxy secret', () => {
  it('is off until created; created, it is returned once and stored as its SHA-256 only', async () => {
    const other = await signUp(h);
    const before = await other.agent.get(proxyPath(other.projectId));
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      enabled: false,
      secretHint: null,
      createdAt: null,
      previousSecretHint: null,
      previousValidUntil: null,
      cookie: { name: DEVICE_COOKIE, maxAgeSeconds: DEVICE_COOKIE_MAX_AGE_S },
    });
    const res = await other.agent
      .post(`${proxyPath(other.projectId)}/secret`)
      .set('origin', other.origin)
      .send({});
    expect(res.status).toBe(201);
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^svc_proxy_[0-9A-Za-z]{38}$/);
    expect(res.body).toMatchObject({ enabled: true, secretHint: `svc_proxy_…${secret.slice(-4)}`, createdAt: new Date(h.clock.now()).toISOString() });
    const after = await other.agent.get(proxyPath(other.projectId));
    expect(after.body).toMatchObject({ enabled: true, secretHint: res.body.secretHint, previousSecretHint: null });
    expect(JSON.stringify(after.body)).not.toContain(secret);
    const stored = await h.store.projects.byId(other.projectId);
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(stored?.proxy?.current.hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(h.logs()).not.toContain(secret);
  });

  it('answers 401 without a session, 404 for an unknown or another account’s project, 403 cross-site and 415 for a non-JSON body', async () => {
    const other = await signUp(h);
    for (const path of [proxyPath(), `${proxyPath()}/traffic`]) {
      expect((await request(h.app).get(path)).status).toBe(401);
      const foreign = await other.agent.get(path);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
      expect((await other.agent.get(path.replace(c.projectId, 'prj_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'))).status).toBe(404);
    }
    expect((await request(h.app).post(`${proxyPath()}/secret`).set('origin', c.origin).send({})).status).toBe(401);
    expect((await request(h.app).delete(`${proxyPath()}/secret`).set('origin', c.origin)).status).toBe(401);
    expect((await other.agent.post(`${proxyPath()}/secret`).set('origin', other.origin).send({})).status).toBe(404);
    expect((await other.agent.delete(`${proxyPath()}/secret`).set('origin', other.origin)).status).toBe(404);
    const evil = await c.agent.post(`${proxyPath()}/secret`).set('origin', 'https://evil.example').send({});
    expect(evil.status).toBe(403);
    expect(evil.body.code).toBe('cross_site_request');
    expect((await c.agent.delete(`${proxyPath()}/secret`).set('origin', 'https://evil.example')).status).toBe(403);
    const form = await c.agent.post(`${proxyPath()}/secret`).set('origin', c.origin).type('form').send('a=1');
    expect(form.status).toBe(415);
    const extra = await c.agent.post(`${proxyPath()}/secret`).set('origin', c.origin).send({ secret: 'mine' });
    expect(extra.status).toBe(400);
  });

  it('rotation keeps the previous secret working for 24 hours; revocation ends both at once', async () => {
    const first = await newSecret();
    const body = () => identifyBody(deviceValues(31));
    expect((await proxied(body(), { secret: first })).status).toBe(200);
    h.clock.advance(60_000);
    const second = await newSecret();
    const view = (await c.agent.get(proxyPath())).body;
    expect(view).toMatchObject({
      secretHint: `svc_proxy_…${second.slice(-4)}`,
      previousSecretHint: `svc_proxy_…${first.slice(-4)}`,
      previousValidUntil: new Date(h.clock.now() + PROXY_ROTATION_OVERLAP_MS).toISOString(),
    });
    expect((await proxied(body(), { secret: first })).status).toBe(200);
    expect((await proxied(body(), { secret: second })).status).toBe(200);
    h.clock.advance(PROXY_ROTATION_OVERLAP_MS);
    const late = await proxied(body(), { secret: first });
    expect(late.status).toBe(401);
    expect(late.body).toEqual({ error: 'Invalid or revoked proxy secret', code: 'invalid_proxy_secret' });
    expect((await c.agent.get(proxyPath())).body).toMatchObject({ previousSecretHint: null, previousValidUntil: null });
    expect((await proxied(body(), { secret: second })).status).toBe(200);

    // A second rotation drops the oldest secret at once: only one previous secret is kept.
    const third = await newSecret();
    const fourth = await newSecret();
    expect((await proxied(body(), { secret: second })).status).toBe(401);
    expect((await proxied(body(), { secret: third })).status).toBe(200);

    const revoked = await c.agent.delete(`${proxyPath()}/secret`).set('origin', c.origin);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ enabled: false, secretHint: null, previousSecretHint: null });
    for (const s of [third, fourth]) expect((await proxied(body(), { secret: s })).status).toBe(401);
    // Without the secret the request is a direct one again.
    expect((await proxied(body(), { secret: null })).status).toBe(200);
  });

  it('simultaneous rotations take turns: every answered secret works until a later rotation moves it out, as one rotation would', async () => {
    const rotate = () => c.agent.post(`${proxyPath()}/secret`).set('origin', c.origin).send({});
    const works = async (secret: string, seed: number) => (await proxied(identifyBody(deviceValues(seed)), { secret })).status === 200;

    // Two at once: one is the current secret, the other the previous; the one before both is out.
    const before = await newSecret();
    const pair = await Promise.all([rotate(), rotate()]);
    expect(pair.map((r) => r.status)).toEqual([201, 201]);
    expect([await works(pair[0].body.secret, 241), await works(pair[1].body.secret, 242), await works(before, 243)]).toEqual([true, true, false]);

    // Ten at once: one chain, each replacing a different secret (none lost), of which the last two work.
    const start = (await c.agent.get(proxyPath())).body.secretHint as string;
    const ten = await Promise.all(Array.from({ length: 10 }, rotate));
    const won = ten.filter((r) => r.status === 201);
    expect(ten.filter((r) => r.status !== 201).map((r) => r.body.code)).toEqual(Array(10 - won.length).fill('conflict'));
    expect(new Set(won.map((r) => r.body.previousSecretHint)).size).toBe(won.length);
    const chain: request.Response[] = [];
    const after = (hint: string) => won.find((r) => r.body.previousSecretHint === hint);
    for (let r = after(start); r; r = after(r.body.secretHint)) chain.push(r);
    expect(chain).toHaveLength(won.length);
    const working = [];
    for (const [i, r] of chain.entries()) working.push(await works(r.body.secret, 250 + i));
    expect(working).toEqual(chain.map((_, i) => i >= chain.length - 2));
  });
});

describe('proxied identify', () => {
  let secret: string;
  beforeAll(async () => {
    secret = await newSecret();
  });

  it('believes the proxy’s headers only with a valid secret: client address, edge analysis, and the device cookie', async () => {
    const res = await proxied(identifyBody(deviceValues(101)), { secret, ip: '81.2.69.142' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.ip).toBe('81.2.69.142');
    expect(res.body.ipLocation.country).toBe('GB');
    const cookie = setCookie(res);
    expect(cookie?.value).toMatch(/^1\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    expect(cookie?.attributes).toEqual([`Max-Age=${DEVICE_COOKIE_MAX_AGE_S}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Secure']);
    // The full event: analysed as the browser behind the proxy, not as the proxy's own connection.
    const event = await request(h.app).get(`/v1/events/${res.body.requestId}`).set('authorization', `Bearer ${secretKey}`);
    expect(event.body.ip).toBe('81.2.69.142');
    expect(event.body.signals.server.http.classification).toBe('browser');
    expect(event.body.signals.server.http.fingerprint).toMatch(/^hfp1:1\.1:post:\d\d:...p:/);
    expect(event.body.signals.server.tls).toEqual({ cipher: null, version: null, ja4: null });
    expect(event.body.verdicts.bot.result).toBe(false);

    // http site: the cookie is not Secure (a browser would refuse it).
    const plain = await proxied(identifyBody(deviceValues(102)), { secret, proto: 'http' });
    expect(setCookie(plain)?.attributes).not.toContain('Secure');
  });

  it('ignores the proxy’s headers without a secret: the address is the socket’s and no cookie is set', async () => {
    const res = await proxied(identifyBody(deviceValues(103)), { secret: null, ip: '81.2.69.142' });
    expect(res.status).toBe(200);
    expect(res.body.ip).toBe('127.0.0.1');
    expect(setCookie(res)).toBeNull();
  });

  it('a wrong secret is 401, never a silent fallback to a direct request', async () => {
    for (const wrong of ['svc_proxy_' + 'x'.repeat(38), '', 'nonsense', secret.slice(0, -1)]) {
      const res = await proxied(identifyBody(deviceValues(104)), { secret: wrong });
      expect(res.status, wrong).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid or revoked proxy secret', code: 'invalid_proxy_secret' });
    }
    // Another project's secret is wrong for this project's key.
    const otherProject = await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Other shop' });
    const otherSecret = await newSecret(c, otherProject.body.id);
    expect((await proxied(identifyBody(deviceValues(104)), { secret: otherSecret })).status).toBe(401);
    // The API key is checked first.
    expect((await proxied(identifyBody(deviceValues(104)), { secret, key: 'svc_live_' + 'x'.repeat(38) })).body.code).toBe('invalid_api_key');
  });

  it('with a valid secret, headers it cannot use are 400 naming the header', async () => {
    const cases: [ProxiedOptions, string][] = [
      [{ ip: 'not-an-ip' }, 'deviceid-proxy-client-ip: missing or not an IP address'],
      [{ ip: '' }, 'deviceid-proxy-client-ip: missing or not an IP address'],
      [{ host: 'shop example' }, 'deviceid-proxy-host: missing or not a host name'],
      [{ proto: 'ftp' }, 'deviceid-proxy-proto: must be http or https'],
    ];
    for (const [o, error] of cases) {
      const res = await proxied(identifyBody(deviceValues(105)), { secret, ...o });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error, code: 'invalid_proxy_headers' });
    }
  });

  it('the cookie alone brings the device back when the agent’s storage is gone (confidence ≥ 0.9), and is renewed', async () => {
    const device = deviceValues(110);
    const first = await proxied(identifyBody(device), { secret });
    const cookie = setCookie(first)!;
    h.clock.advance(8 * 24 * 3_600_000);
    // Safari deleted the script's storage after 7 days: no agent token, only the server-set cookie.
    const again = await proxied(identifyBody(withoutToken(device)), { secret, cookie: `${cookie.pair}; _ga=GA1.2.3; _did=x` });
    expect(again.status).toBe(200);
    expect(again.body.visitorId).toBe(first.body.visitorId);
    expect(again.body.visitCount).toBe(2);
    expect(again.body.confidence).toBeGreaterThanOrEqual(0.9);
    // The same value, its lifetime renewed.
    expect(setCookie(again)?.value).toBe(cookie.value);
    // A new agent token on a later visit joins the same visitor, and both tokens name it.
    h.clock.advance(60_000);
    const renewed = { ...device, deviceToken: { token: 'tok_after_itp_' + 'y'.repeat(16), storage: 'localStorage' as const, createdAt: 1 } };
    const third = await proxied(identifyBody(renewed), { secret, cookie: cookie.pair });
    expect(third.body.visitorId).toBe(first.body.visitorId);
    const sha = (s: string) => createHash('sha256').update(s).digest('base64url');
    expect(await h.store.identity.tokenOwner(c.accountId, sha(renewed.deviceToken.token))).toBe(first.body.visitorId);
    expect(await h.store.identity.tokenOwner(c.accountId, cookieTokenHash(cookie.value))).toBe(first.body.visitorId);
  });

  it('a forged, altered or another project’s cookie is ignored: a new one is issued and the presented token never enters the index', async () => {
    const device = deviceValues(120);
    const first = await proxied(identifyBody(device), { secret });
    const good = setCookie(first)!;
    const [, token, mac] = good.value.split('.') as [string, string, string];
    const forged = `1.${'A'.repeat(22)}.${'B'.repeat(22)}`;
    const altered = `1.${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}.${mac}`;
    for (const bad of [forged, altered, `1.${token}.${mac.slice(0, -2)}`, 'j:{"a":1}', `2.${token}.${mac}`]) {
      const res = await proxied(identifyBody(withoutToken(deviceValues(121))), { secret, cookie: `${DEVICE_COOKIE}=${bad}` });
      expect(res.status, bad).toBe(200);
      const issued = setCookie(res)!;
      expect(issued.value).not.toBe(bad);
      // (The good cookie's own token, under a broken MAC, is in the index from its own visit.)
      if (bad.startsWith('1.') && !bad.startsWith(`1.${token}.`)) expect(await h.store.identity.tokenOwner(c.accountId, cookieTokenHash(bad))).toBeNull();
    }
    // Another project of the same account: the cookie is valid for its own project only.
    const project = await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Second shop' });
    const otherSecret = await newSecret(c, project.body.id);
    const otherKey = await c.key('live', project.body.id);
    const there = await proxied(identifyBody(withoutToken(deviceValues(122))), { secret: otherSecret, key: otherKey, cookie: good.pair });
    expect(there.status).toBe(200);
    expect(setCookie(there)!.value).not.toBe(good.value);
    // The unit: a cookie verifies for its project only, and any change breaks it.
    const cookies = new DeviceCookies(h.config.serverSecret);
    const issued = cookies.issue('prj_a');
    expect(cookies.verify('prj_a', issued.value)).toBe(issued.token);
    expect(cookies.verify('prj_b', issued.value)).toBeNull();
    expect(new DeviceCookies('another-server-secret-'.padEnd(40, 'y')).verify('prj_a', issued.value)).toBeNull();
    for (let i = 0; i < issued.value.length; i++) {
      if (issued.value[i] === '.') continue;
      const flipped = issued.value.slice(0, i) + (issued.value[i] === 'a' ? 'b' : 'a') + issued.value.slice(i + 1);
      expect(cookies.verify('prj_a', flipped), flipped).toBeNull();
    }
  });

  it('the domain allowlist judges the proxied host as well as the page and the Origin', async () => {
    const project = await c.agent
      .post('/api/projects')
      .set('origin', c.origin)
      .send({ name: 'Allowlisted', allowedDomains: ['shop.example.com'] });
    const key = await c.key('live', project.body.id);
    const s = await newSecret(c, project.body.id);
    expect((await proxied(identifyBody(deviceValues(130)), { secret: s, key })).status).toBe(200);
    const res = await proxied(identifyBody(deviceValues(130)), { secret: s, key, host: 'evil.example' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('domain_not_allowed');
  });

  it('never logs the proxy secret or the device cookie', async () => {
    const res = await proxied(identifyBody(deviceValues(131)), { secret });
    const cookie = setCookie(res)!;
    await proxied(identifyBody(deviceValues(131)), { secret, cookie: cookie.pair });
    expect(h.logs()).not.toContain(secret);
    expect(h.logs()).not.toContain(cookie.value);
  });
});

describe('linking the agent’s token and the device cookie', () => {
  let secret: string;
  beforeAll(async () => {
    secret = await newSecret();
  });
  const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

  it('chooses a known token first, the agent’s before the cookie, and the cookie when both are known and disagree', () => {
    const owners = new Map<string, string | null>([
      ['s1', 'iq_a'],
      ['c1', 'iq_a'],
      ['c2', 'iq_b'],
      ['s0', null],
      ['c0', null],
    ]);
    expect(chooseToken('s1', 'c1', owners)).toBe('s1');
    expect(chooseToken('s1', 'c2', owners)).toBe('c2');
    expect(chooseToken('s0', 'c1', owners)).toBe('c1');
    expect(chooseToken('s1', 'c0', owners)).toBe('s1');
    expect(chooseToken('s0', 'c0', owners)).toBe('s0');
    expect(chooseToken(null, 'c1', owners)).toBe('c1');
    expect(chooseToken('s1', null, owners)).toBe('s1');
    expect(chooseToken(null, null, owners)).toBeNull();
    // The visit's tokens: a cookie not presented (issued now) is never gone by, but is the other token and the cookie.
    expect(visitTokens('s1', 'c2', true, owners)).toEqual({ tokenHash: 'c2', otherToken: 's1', cookie: 'c2', cookiePresented: true });
    expect(visitTokens('s0', 'cNew', false, owners)).toEqual({ tokenHash: 's0', otherToken: 'cNew', cookie: 'cNew', cookiePresented: false });
    expect(visitTokens(null, 'cNew', false, owners)).toEqual({ tokenHash: null, otherToken: 'cNew', cookie: 'cNew', cookiePresented: false });
    expect(visitTokens('s1', null, false, owners)).toEqual({ tokenHash: 's1', otherToken: null, cookie: null, cookiePresented: false });
    // Afterwards the other tokens name the matched visitor, unless linking did not believe the visit's token.
    const matched = { visitorId: 'iq_a', tokenRejected: false };
    // The cookie won against the agent's token: the agent's token moves to the cookie's visitor.
    expect(tokensToPoint(['s1', 'c2'], 'c2', owners, { visitorId: 'iq_b', tokenRejected: false })).toEqual(['s1']);
    expect(tokensToPoint(['s0', 'c2'], 's0', owners, matched)).toEqual(['c2']);
    expect(tokensToPoint(['s1', 'cNew'], 's1', owners, matched)).toEqual(['cNew']);
    expect(tokensToPoint(['s1', 'c1'], 's1', owners, matched)).toEqual([]);
    const rejected = { visitorId: 'iq_new', tokenRejected: true };
    expect(tokensToPoint(['s1', 'c2', 'cNew'], 's1', owners, rejected)).toEqual(['cNew']);
  });

  it('when the tokens name different visitors, the cookie’s wins and the agent’s token moves to it', async () => {
    const a = deviceValues(140);
    const b = deviceValues(141);
    const first = await proxied(identifyBody(a), { secret });
    const cookie = setCookie(first)!;
    const other = await proxied(identifyBody(b), { secret });
    expect(other.body.visitorId).not.toBe(first.body.visitorId);
    h.clock.advance(60_000);
    // Device a again, carrying b's agent token (copied storage) beside its own cookie.
    const res = await proxied(identifyBody({ ...a, deviceToken: b.deviceToken }), { secret, cookie: cookie.pair });
    expect(res.body.visitorId).toBe(first.body.visitorId);
    expect(await h.store.identity.tokenOwner(c.accountId, sha(b.deviceToken.token!))).toBe(first.body.visitorId);
  });

  it('a look-alike merged by fingerprint is told apart by its cookie once its agent storage is gone: the cookie takes turns with the other device’s tokens', async () => {
    // Two identical computers in one office, each with its own agent token and cookie.
    const a = { ...deviceValues(160), deviceToken: { token: 'tok_office_a_' + 'a'.repeat(16), storage: 'localStorage' as const, createdAt: 1 } };
    const b = { ...a, deviceToken: { token: 'tok_office_b_' + 'b'.repeat(16), storage: 'localStorage' as const, createdAt: 1 } };
    const office = { secret, ip: '2.125.160.216' };
    const first = await proxied(identifyBody(a), office);
    const cookieA = setCookie(first)!.pair;
    h.clock.advance(60_000);
    const merged = await proxied(identifyBody(b), office);
    expect(merged.body.visitorId).toBe(first.body.visitorId);
    const cookieB = setCookie(merged)!.pair;
    h.clock.advance(60_000);
    expect((await proxied(identifyBody(a), { ...office, cookie: cookieA })).body.visitorId).toBe(first.body.visitorId);
    // b's agent storage is gone (ITP, or cleared without cookies): only its cookie says which device it is.
    h.clock.advance(60_000);
    const separated = await proxied(identifyBody(withoutToken(b)), { ...office, cookie: cookieB });
    expect(separated.body.visitorId).not.toBe(first.body.visitorId);
    expect(await h.store.identity.tokenOwner(c.accountId, cookieTokenHash(cookieB.split('=')[1]!))).toBe(separated.body.visitorId);
    h.clock.advance(60_000);
    expect((await proxied(identifyBody(a), { ...office, cookie: cookieA })).body.visitorId).toBe(first.body.visitorId);
    expect((await proxied(identifyBody(withoutToken(b)), { ...office, cookie: cookieB })).body.visitorId).toBe(separated.body.visitorId);
  });

  it('a direct identify is unchanged: the agent’s token alone, no cookie', async () => {
    const d = deviceValues(150);
    const one = await request(h.app).post('/v1/identify').set('x-api-key', live).send(identifyBody(d));
    const two = await request(h.app).post('/v1/identify').set('x-api-key', live).send(identifyBody(d));
    expect(two.body.visitorId).toBe(one.body.visitorId);
    expect(setCookie(two)).toBeNull();
    // The same device then through the proxy: its cookie joins the visitor its agent token names.
    const via = await proxied(identifyBody(d), { secret });
    expect(via.body.visitorId).toBe(one.body.visitorId);
    expect(await h.store.identity.tokenOwner(c.accountId, cookieTokenHash(setCookie(via)!.value))).toBe(one.body.visitorId);
  });
});

describe('dashboard: proxy traffic', () => {
  it('the share of the last 24 hours’ identify calls that came through a proxy, and the last error a proxy met', async () => {
    const customer = await signUp(h);
    const key = await customer.key('live');
    const s = await newSecret(customer);
    const traffic = async () => {
      const res = await customer.agent.get(`${proxyPath(customer.projectId)}/traffic`);
      expect(res.status).toBe(200);
      return res.body;
    };
    expect(await traffic()).toMatchObject({ identify: 0, proxied: 0, share: null, lastError: null });
    for (let i = 0; i < 3; i++)
      await request(h.app)
        .post('/v1/identify')
        .set('x-api-key', key)
        .send(identifyBody(deviceValues(200 + i)));
    for (let i = 0; i < 1; i++) expect((await proxied(identifyBody(deviceValues(210 + i)), { secret: s, key })).status).toBe(200);
    expect(await traffic()).toMatchObject({ identify: 4, proxied: 1, share: 0.25, lastError: null });

    // The service records what it refused.
    h.clock.advance(1_000);
    await proxied(identifyBody(deviceValues(220)), { secret: 'svc_proxy_wrong', key });
    const refused = await traffic();
    expect(refused.lastError).toMatchObject({ code: 'invalid_secret', source: 'service', at: new Date(h.clock.now()).toISOString() });
    expect(refused.identify).toBe(4);

    // A proxy reports what it met on its way (with its next request that gets through).
    h.clock.advance(1_000);
    const at = h.clock.now() - 500;
    expect((await proxied(identifyBody(deviceValues(221)), { secret: s, key, extra: { [PROXY_HEADERS.error]: `timeout; at=${at}` } })).status).toBe(200);
    expect((await traffic()).lastError).toMatchObject({ code: 'timeout', source: 'proxy', at: new Date(at).toISOString() });
    // Malformed reports, and reports without a valid secret, are ignored.
    await proxied(identifyBody(deviceValues(222)), { secret: s, key, extra: { [PROXY_HEADERS.error]: `<script>; at=${at + 1}` } });
    await proxied(identifyBody(deviceValues(222)), { secret: null, key, extra: { [PROXY_HEADERS.error]: `unreachable; at=${at + 2}` } });
    expect((await traffic()).lastError).toMatchObject({ code: 'timeout', at: new Date(at).toISOString() });

    // 24 hours on, the window has moved past those calls.
    h.clock.advance(24 * 3_600_000);
    expect(await traffic()).toMatchObject({ identify: 0, proxied: 0, share: null, lastError: { code: 'timeout' } });
  });
});
