// The dashboard API: sign-up/in/out, sessions, CSRF, projects, keys, isolation.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_LIMITS } from '../../../server/accounts/throttle.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';

let h: Harness;
let origin: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
  origin = new URL(h.config.baseUrl).origin;
});
afterAll(async () => {
  await h.close();
});

const KEY_RE = /^svc_(live|test|secret)_[0-9A-Za-z]{38}$/;

describe('sign-up, sign-in, sign-out', () => {
  it('signs up: 201 {user, account} on plan free with a session cookie and a Default project; the first account administers the instance', async () => {
    const agent = request.agent(h.app);
    const res = await agent.post('/api/auth/signup').set('origin', origin).send({ email: 'Ada@Example.com', password: 'long enough pw', name: 'Ada' });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ email: 'ada@example.com', name: 'Ada' });
    expect(res.body.user.id).toMatch(/^usr_/);
    expect(res.body.account).toEqual({
      id: expect.stringMatching(/^acc_/),
      plan: 'free',
      limits: { rps: 10, monthly: 10_000 },
      usage: { period: '2026-01', count: 0 },
      admin: true,
      canChangePlan: true,
    });
    const cookie = res.headers['set-cookie']![0]!;
    expect(cookie).toMatch(/^deviceid_session=[\w-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    const projects = await agent.get('/api/projects');
    expect(projects.body.projects).toEqual([
      { id: expect.stringMatching(/^prj_/), name: 'Default project', allowedDomains: [], linkedIdEvidence: true, createdAt: expect.any(String) },
    ]);
    expect(JSON.stringify(await h.store.db.collection('users').find().toArray())).not.toContain('long enough pw');
  });

  it('refuses a second sign-up with the same email (any case): 409', async () => {
    const res = await request(h.app).post('/api/auth/signup').set('origin', origin).send({ email: 'ADA@example.com', password: 'another password' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Email already registered', code: expect.any(String) });
  });

  it('lets exactly one of concurrent sign-ups with one email win', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        request(h.app).post('/api/auth/signup').set('origin', origin).send({ email: 'race@example.com', password: 'race password 1' }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it.each([
    [{ email: 'x@example.com', password: 'short' }, /^password: must be at least 10 characters/],
    [{ email: 'not-an-email', password: 'long enough pw' }, /^email: /],
    [{ password: 'long enough pw' }, /^email: Required/],
  ])('rejects a bad sign-up body %o with 400 naming the field', async (body, error) => {
    const res = await request(h.app).post('/api/auth/signup').set('origin', origin).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(error);
  });

  it('signs in with the right password and refuses a wrong one or an unknown email alike', async () => {
    const ok = await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: 'ada@example.com', password: 'long enough pw' });
    expect(ok.status).toBe(200);
    expect(ok.body.user.email).toBe('ada@example.com');
    expect(ok.headers['set-cookie']![0]).toMatch(/^deviceid_session=/);
    for (const body of [
      { email: 'ada@example.com', password: 'wrong password' },
      { email: 'nobody@example.com', password: 'long enough pw' },
    ]) {
      const bad = await request(h.app).post('/api/auth/login').set('origin', origin).send(body);
      expect(bad.status).toBe(401);
      expect(bad.body).toEqual({ error: 'Invalid email or password', code: expect.any(String) });
      expect(bad.headers['set-cookie']).toBeUndefined();
    }
  });

  it('answers 429 after repeated failures for one email from one address, until the window passes', async () => {
    await request(h.app).post('/api/auth/signup').set('origin', origin).send({ email: 'brute@example.com', password: 'the real password' });
    for (let i = 0; i < SIGN_IN_LIMITS.emailAndIp.max; i++) {
      const r = await request(h.app)
        .post('/api/auth/login')
        .set('origin', origin)
        .send({ email: 'brute@example.com', password: `guess ${i}` });
      expect(r.status).toBe(401);
    }
    const blocked = await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: 'brute@example.com', password: 'the real password' });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toMatch(/Too many failed sign-in attempts/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    h.clock.advance(SIGN_IN_LIMITS.emailAndIp.windowMs);
    const later = await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: 'brute@example.com', password: 'the real password' });
    expect(later.status).toBe(200);
  });

  it('signs out: 204, the cookie is cleared and the session no longer works', async () => {
    const c = await signUp(h);
    expect((await c.agent.get('/api/account')).status).toBe(200);
    const out = await c.agent.post('/api/auth/logout').set('origin', c.origin).set('content-type', 'application/json').send('{}');
    expect(out.status).toBe(204);
    expect(out.headers['set-cookie']![0]).toMatch(/^deviceid_session=;/);
    const after = await c.agent.get('/api/account');
    expect(after.status).toBe(401);
  });

  it('expires sessions after 30 days', async () => {
    const c = await signUp(h);
    h.clock.advance(30 * 24 * 3600_000 + 1);
    expect((await c.agent.get('/api/account')).status).toBe(401);
  });
});

describe('session and CSRF protection', () => {
  it.each([
    ['get', '/api/account'],
    ['put', '/api/account/plan'],
    ['get', '/api/projects'],
    ['post', '/api/projects'],
    ['patch', '/api/projects/prj_x'],
    ['get', '/api/projects/prj_x/keys'],
    ['post', '/api/projects/prj_x/keys'],
    ['delete', '/api/projects/prj_x/keys/key_x'],
    ['post', '/api/auth/logout'],
  ] as const)('%s %s without a session: 401 {error}', async (method, path) => {
    const res = await request(h.app)[method](path).set('origin', origin).send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Not signed in', code: expect.any(String) });
  });

  it('rejects a state change from another origin, or with no origin at all: 403', async () => {
    const c = await signUp(h);
    const evil = await c.agent.post('/api/projects').set('origin', 'https://evil.example').send({ name: 'x' });
    expect(evil.status).toBe(403);
    expect(evil.body).toEqual({ error: 'Cross-site request rejected', code: expect.any(String) });
    const none = await c.agent.post('/api/projects').send({ name: 'x' });
    expect(none.status).toBe(403);
    const referer = await c.agent.post('/api/projects').set('referer', `${c.origin}/dashboard`).send({ name: 'via referer' });
    expect(referer.status).toBe(201);
    const signup = await request(h.app)
      .post('/api/auth/signup')
      .set('origin', 'https://evil.example')
      .send({ email: 'csrf@example.com', password: 'long enough pw' });
    expect(signup.status).toBe(403);
  });

  it('rejects a form-encoded state change: 415', async () => {
    const c = await signUp(h);
    const res = await c.agent.post('/api/projects').set('origin', c.origin).type('form').send('name=x');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'Content-Type must be application/json', code: expect.any(String) });
  });
});

describe('account and plan', () => {
  it('leaves plans to the administrator: a member may not switch its own (403)', async () => {
    const c = await signUp(h);
    const res = await c.agent.put('/api/account/plan').set('origin', c.origin).send({ plan: 'scale' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Plans are assigned by the administrator', code: expect.any(String) });
    expect((await c.agent.get('/api/account')).body.account).toMatchObject({ plan: 'free', admin: false, canChangePlan: false });
  });

  it('switches plan with PLAN_SELF_SERVICE=true and reports the new limits', async () => {
    const selfService = await createHarness(import.meta.filename, { PLAN_SELF_SERVICE: 'true' });
    await signUp(selfService); // the administrator
    const c = await signUp(selfService);
    expect((await c.agent.get('/api/account')).body.account).toMatchObject({ admin: false, canChangePlan: true });
    const res = await c.agent.put('/api/account/plan').set('origin', c.origin).send({ plan: 'growth' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.accountId, plan: 'growth', limits: { rps: 1000, monthly: 250_000 } });
    expect((await c.agent.get('/api/account')).body.account.plan).toBe('growth');
    const bad = await c.agent.put('/api/account/plan').set('origin', c.origin).send({ plan: 'platinum' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^plan: /);
    await selfService.close();
  });
});

describe('projects', () => {
  it('creates, lists and updates projects with normalised allowed domains', async () => {
    const c = await signUp(h);
    const created = await c.agent
      .post('/api/projects')
      .set('origin', c.origin)
      .send({ name: ' Shop ', allowedDomains: ['Shop.Example.com', '*.example.org', 'shop.example.com'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Shop', allowedDomains: ['shop.example.com', '*.example.org'] });
    const patched = await c.agent.patch(`/api/projects/${created.body.id}`).set('origin', c.origin).send({ allowedDomains: [] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Shop', allowedDomains: [] });
    const list = await c.agent.get('/api/projects');
    expect(list.body.projects.map((p: { name: string }) => p.name)).toEqual(['Default project', 'Shop']);
  });

  it.each([['https://example.com'], ['exa mple.com'], ['*.'], ['a..b']])('rejects the domain %s with 400', async (domain) => {
    const c = await signUp(h);
    const res = await c.agent
      .post('/api/projects')
      .set('origin', c.origin)
      .send({ name: 'x', allowedDomains: [domain] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^allowedDomains\.0: /);
  });
});

describe('API keys', () => {
  it('creates a key whose value is shown once and never again', async () => {
    const c = await signUp(h);
    const res = await c.agent.post(`/api/projects/${c.projectId}/keys`).set('origin', c.origin).send({ name: 'Website', type: 'live' });
    expect(res.status).toBe(201);
    const { key, apiKey } = res.body;
    expect(key).toMatch(KEY_RE);
    expect(key.startsWith('svc_live_')).toBe(true);
    expect(apiKey).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'Website',
      type: 'live',
      status: 'active',
      projectId: c.projectId,
      hint: `svc_live_…${key.slice(-4)}`,
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      source: 'dashboard',
    });
    const list = await c.agent.get(`/api/projects/${c.projectId}/keys`);
    expect(list.body.keys).toEqual([apiKey]);
    expect(JSON.stringify(list.body)).not.toContain(key);
    // Only the hash is stored.
    expect(JSON.stringify(await h.store.db.collection('apiKeys').find().toArray())).not.toContain(key);
  });

  it('revokes a key: 200 with status revoked, and it stops working at once', async () => {
    const c = await signUp(h);
    const secret = await c.key('secret');
    const before = await request(h.app).get('/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('authorization', `Bearer ${secret}`);
    expect(before.status).not.toBe(401);
    const keys = await c.agent.get(`/api/projects/${c.projectId}/keys`);
    const id = keys.body.keys[0].id;
    const res = await c.agent.delete(`/api/projects/${c.projectId}/keys/${id}`).set('origin', c.origin);
    expect(res.status).toBe(200);
    expect(res.body.apiKey).toMatchObject({ id, status: 'revoked', revokedAt: expect.any(String) });
    const after = await request(h.app).get('/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('authorization', `Bearer ${secret}`);
    expect(after.status).toBe(401);
    const missing = await c.agent.delete(`/api/projects/${c.projectId}/keys/key_nope`).set('origin', c.origin);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'API key not found', code: expect.any(String) });
  });

  it('refuses a key type that does not exist and an empty name', async () => {
    const c = await signUp(h);
    const type = await c.agent.post(`/api/projects/${c.projectId}/keys`).set('origin', c.origin).send({ name: 'x', type: 'admin' });
    expect(type.status).toBe(400);
    expect(type.body.error).toMatch(/^type: /);
    const name = await c.agent.post(`/api/projects/${c.projectId}/keys`).set('origin', c.origin).send({ name: '  ', type: 'live' });
    expect(name.status).toBe(400);
    expect(name.body.error).toMatch(/^name: /);
  });

  it('records lastUsedAt on use, at most once a minute', async () => {
    const c = await signUp(h);
    const secret = await c.key('secret');
    const use = () => request(h.app).get('/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('authorization', `Bearer ${secret}`);
    const lastUsed = async () => (await c.agent.get(`/api/projects/${c.projectId}/keys`)).body.keys[0].lastUsedAt;
    await use();
    const first = await lastUsed();
    expect(first).toBe(new Date(h.clock.now()).toISOString());
    h.clock.advance(30_000);
    await use();
    expect(await lastUsed()).toBe(first);
    h.clock.advance(31_000);
    await use();
    expect(await lastUsed()).toBe(new Date(h.clock.now()).toISOString());
  });
});

describe('isolation between accounts', () => {
  it("cannot see or touch another account's projects and keys", async () => {
    const a = await signUp(h);
    const b = await signUp(h);
    await a.key('live');
    const aKeys = await a.agent.get(`/api/projects/${a.projectId}/keys`);
    const keyId = aKeys.body.keys[0].id;
    const attempts = [
      b.agent.get(`/api/projects/${a.projectId}/keys`),
      b.agent.post(`/api/projects/${a.projectId}/keys`).set('origin', b.origin).send({ name: 'x', type: 'live' }),
      b.agent.patch(`/api/projects/${a.projectId}`).set('origin', b.origin).send({ name: 'mine now' }),
      b.agent.delete(`/api/projects/${a.projectId}/keys/${keyId}`).set('origin', b.origin),
      b.agent.delete(`/api/projects/${b.projectId}/keys/${keyId}`).set('origin', b.origin),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatch(/not found/);
    }
    const bProjects = await b.agent.get('/api/projects');
    expect(bProjects.body.projects.map((p: { id: string }) => p.id)).toEqual([b.projectId]);
    expect((await a.agent.get(`/api/projects/${a.projectId}/keys`)).body.keys[0].status).toBe('active');
  });
});

describe('logging', () => {
  it('never logs passwords, cookies or keys', async () => {
    const c = await signUp(h, 'logged@example.com');
    const key = await c.key('live');
    await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: 'logged@example.com', password: 'correct horse battery' });
    const logs = h.logs();
    expect(logs).not.toContain('correct horse battery');
    expect(logs).not.toContain(key);
    expect(logs).not.toMatch(/deviceid_session=/);
  });
});
