// Sign-in throttling: slots reserved before the password is checked, so that
// concurrent guesses never evaluate more passwords than the limits allow
// (the audit had 49 of 50 evaluated and the right one among them let in);
// limits per email and address, so that a guesser elsewhere cannot lock the
// owner out, and a slower per-email limit with a known-device exemption.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_DEVICE_COOKIE, knownDevice, knownDeviceCookie, SIGN_IN_LIMITS, signInLimits } from '../../../server/accounts/throttle.js';
import { createHarness, type Harness } from '../../support/harness.js';

const SECRET = 'a-server-secret-of-at-least-32-characters';
const PASSWORD = 'quiet-otter-lantern-47';

describe('signInLimits', () => {
  it('counts an unknown device per email and address, per address, and per email', () => {
    expect(signInLimits('a@example.com', '192.0.2.7', null)).toEqual([
      { key: 'signin:email-ip:a@example.com|192.0.2.7', max: 5, windowMs: 15 * 60_000 },
      { key: 'signin:ip:192.0.2.7', max: 20, windowMs: 15 * 60_000 },
      { key: 'signin:email:a@example.com', max: 20, windowMs: 60 * 60_000 },
    ]);
  });

  it('counts a known device on its own', () => {
    expect(signInLimits('a@example.com', '192.0.2.7', 'nonce1')).toEqual([{ key: 'signin:device:nonce1', max: 5, windowMs: 15 * 60_000 }]);
  });
});

describe('known-device cookies', () => {
  it('are recognised for the email they were issued for, and nothing else', () => {
    const cookie = knownDeviceCookie(SECRET, 'a@example.com');
    const nonce = cookie.split('.')[0];
    expect(nonce).toMatch(/^[\w-]{22}$/);
    expect(knownDevice(SECRET, 'a@example.com', cookie)).toBe(nonce);
    expect(knownDevice(SECRET, 'b@example.com', cookie)).toBeNull();
    expect(knownDevice('another-secret-of-at-least-32-characters', 'a@example.com', cookie)).toBeNull();
    expect(knownDeviceCookie(SECRET, 'a@example.com')).not.toBe(cookie);
  });

  it.each([
    ['a changed signature', (c: string) => c.slice(0, -1) + (c.endsWith('A') ? 'B' : 'A')],
    ['a truncated signature', (c: string) => c.slice(0, -2)],
    ['another nonce', (c: string) => 'x' + c],
    ['no signature', (c: string) => c.split('.')[0]!],
    ['an extra part', (c: string) => `${c}.x`],
    ['an empty nonce', (c: string) => `.${c.split('.')[1]}`],
    ['nothing', () => ''],
  ])('refuse %s', (_what, tamper) => {
    expect(knownDevice(SECRET, 'a@example.com', tamper(knownDeviceCookie(SECRET, 'a@example.com')))).toBeNull();
  });

  it('refuse values that are not strings (cookie-parser JSON)', () => {
    expect(knownDevice(SECRET, 'a@example.com', { a: 1 })).toBeNull();
    expect(knownDevice(SECRET, 'a@example.com', undefined)).toBeNull();
  });
});

describe('attempt slots', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(import.meta.filename);
  });
  afterAll(async () => {
    await h.close();
  });

  it('give out exactly `max` slots to 50 simultaneous takers, per window', async () => {
    const limit = { key: 'test:race', max: 5, windowMs: 60_000 };
    const now = new Date(h.clock.now());
    const taken = await Promise.all(Array.from({ length: 50 }, () => h.store.attempts.take(limit, now)));
    expect(taken.filter(Boolean)).toHaveLength(5);
    expect(await h.store.attempts.take(limit, now)).toBeNull();
    const next = new Date(Math.ceil((now.getTime() + 1) / 60_000) * 60_000);
    expect(await h.store.attempts.take(limit, next)).not.toBeNull();
  });

  it('take all limits or none, naming the full one and when its window ends', async () => {
    const now = new Date(Date.UTC(2026, 0, 15, 12, 10, 0));
    const full = { key: 'test:full', max: 1, windowMs: 15 * 60_000 };
    const other = { key: 'test:other', max: 1, windowMs: 15 * 60_000 };
    const window = Math.floor(now.getTime() / full.windowMs);
    expect(await h.store.attempts.takeAll([full], now)).toEqual({
      ok: true,
      slots: [{ _id: `test:full|${window}|0`, expiresAt: new Date((window + 1) * full.windowMs) }],
    });
    const refused = await h.store.attempts.takeAll([other, full], now);
    expect(refused).toEqual({ ok: false, limit: full, retryAfterMs: 5 * 60_000 });
    // `other` was given back.
    expect((await h.store.attempts.takeAll([other], now)).ok).toBe(true);
  });

  it('give a released slot to the next taker; a gap below a taken last slot stays closed (never more than max)', async () => {
    const limit = { key: 'test:release', max: 2, windowMs: 60_000 };
    const now = new Date(h.clock.now());
    const first = await h.store.attempts.take(limit, now);
    const second = await h.store.attempts.take(limit, now);
    expect(await h.store.attempts.take(limit, now)).toBeNull();
    await h.store.attempts.release([second!]);
    expect(await h.store.attempts.take(limit, now)).toEqual(second);
    await h.store.attempts.release([first!]);
    expect(await h.store.attempts.take(limit, now)).toBeNull();
  });
});

describe('POST /api/auth/login throttling', () => {
  let h: Harness;
  let origin: string;
  let n = 0;
  beforeAll(async () => {
    // Behind one trusted proxy hop: X-Forwarded-For names the client.
    h = await createHarness(import.meta.filename, { TRUST_PROXY: '1' });
    origin = new URL(h.config.baseUrl).origin;
  });
  afterAll(async () => {
    await h.close();
  });

  const newUser = async () => {
    const email = `user${++n}@example.com`;
    const res = await request(h.app).post('/api/auth/signup').set('origin', origin).send({ email, password: PASSWORD });
    expect(res.status).toBe(201);
    return email;
  };
  const login = (email: string, password: string, ip: string, cookie?: string) => {
    const req = request(h.app).post('/api/auth/login').set('origin', origin).set('x-forwarded-for', ip);
    return (cookie ? req.set('cookie', cookie) : req).send({ email, password });
  };
  const deviceCookieOf = (res: request.Response) => {
    const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    return set.find((c) => c.startsWith(`${KNOWN_DEVICE_COOKIE}=`))!.split(';')[0]!;
  };
  /** A new window for every test: the clock moves past the longest one. */
  const nextWindow = () => h.clock.advance(SIGN_IN_LIMITS.email.windowMs);

  it('evaluates at most 5 of 50 simultaneous attempts on one email, and the right password among them gets no extra chance', async () => {
    nextWindow();
    const email = await newUser();
    const statuses = (await Promise.all(Array.from({ length: 50 }, (_, i) => login(email, i === 37 ? PASSWORD : `wrong guess ${i}`, '198.51.100.1')))).map(
      (r) => r.status,
    );
    const evaluated = statuses.filter((s) => s === 401 || s === 200);
    expect(evaluated).toHaveLength(SIGN_IN_LIMITS.emailAndIp.max);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - SIGN_IN_LIMITS.emailAndIp.max);
    expect(new Set(statuses)).toEqual(new Set([...evaluated, 429]));
  });

  it('evaluates at most 20 of 100 simultaneous attempts from one address on different emails', async () => {
    nextWindow();
    const statuses = (await Promise.all(Array.from({ length: 100 }, (_, i) => login(`nobody${i}@example.com`, 'wrong guess', '198.51.100.2')))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(SIGN_IN_LIMITS.ip.max);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100 - SIGN_IN_LIMITS.ip.max);
  });

  it('blocks a guesser at their address for the rest of the window (Retry-After), while the owner signs in from elsewhere', async () => {
    nextWindow();
    const email = await newUser();
    for (let i = 0; i < SIGN_IN_LIMITS.emailAndIp.max; i++) {
      const wrong = await login(email, `wrong ${i}`, '203.0.113.66');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({ error: 'Invalid email or password', code: expect.any(String) });
    }
    h.clock.advance(60_000);
    const blocked = await login(email, PASSWORD, '203.0.113.66');
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ error: 'Too many failed sign-in attempts; try again later', code: expect.any(String) });
    const windowEnd = (Math.floor(h.clock.now() / SIGN_IN_LIMITS.emailAndIp.windowMs) + 1) * SIGN_IN_LIMITS.emailAndIp.windowMs;
    expect(Number(blocked.headers['retry-after'])).toBe(Math.ceil((windowEnd - h.clock.now()) / 1000));
    expect((await login(email, PASSWORD, '192.0.2.10')).status).toBe(200);
    // The guesser's address may still try other emails.
    expect((await login('other@example.com', 'wrong', '203.0.113.66')).status).toBe(401);
  });

  it('limits guessing one email from many addresses (20 an hour), but not the owner on a known device', async () => {
    nextWindow();
    const email = await newUser();
    const owner = await login(email, PASSWORD, '192.0.2.20');
    expect(owner.status).toBe(200);
    const device = deviceCookieOf(owner);
    for (let i = 0; i < SIGN_IN_LIMITS.email.max; i++) {
      expect((await login(email, `wrong ${i}`, `203.0.113.${100 + Math.floor(i / 5)}`)).status).toBe(401);
    }
    expect((await login(email, PASSWORD, '203.0.113.200')).status).toBe(429);
    expect((await login(email, PASSWORD, '192.0.2.20')).status).toBe(429);
    // Same address as a guesser, even, but a known device.
    expect((await login(email, PASSWORD, '203.0.113.100', device)).status).toBe(200);
  });

  it('limits a known device on its own (5 per window), without touching the shared limits', async () => {
    nextWindow();
    const email = await newUser();
    const device = deviceCookieOf(await login(email, PASSWORD, '192.0.2.30'));
    for (let i = 0; i < SIGN_IN_LIMITS.knownDevice.max; i++) expect((await login(email, `wrong ${i}`, '192.0.2.30', device)).status).toBe(401);
    expect((await login(email, PASSWORD, '192.0.2.30', device)).status).toBe(429);
    expect((await login(email, PASSWORD, '192.0.2.30')).status).toBe(200);
  });

  it("gives a success's slots back: signing in often is no failure", async () => {
    nextWindow();
    const email = await newUser();
    for (let i = 0; i < SIGN_IN_LIMITS.emailAndIp.max * 2; i++) expect((await login(email, PASSWORD, '192.0.2.40')).status).toBe(200);
    for (let i = 0; i < SIGN_IN_LIMITS.emailAndIp.max; i++) expect((await login(email, `wrong ${i}`, '192.0.2.40')).status).toBe(401);
    expect((await login(email, PASSWORD, '192.0.2.40')).status).toBe(429);
  });

  it('sets the known-device cookie on sign-up and sign-in, HttpOnly, for /api/auth only', async () => {
    nextWindow();
    const email = `device${++n}@example.com`;
    const signup = await request(h.app).post('/api/auth/signup').set('origin', origin).send({ email, password: PASSWORD });
    const cookie = ([] as string[]).concat(signup.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${KNOWN_DEVICE_COOKIE}=`));
    expect(cookie).toMatch(/^deviceid_known=[\w-]+\.[\w-]+; Max-Age=31536000; Path=\/api\/auth; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
    expect(knownDevice(h.config.serverSecret, email, cookie!.split(';')[0]!.split('=')[1])).not.toBeNull();
  });
});
