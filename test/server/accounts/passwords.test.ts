// The password policy at sign-up: common, trivial and personal passwords are
// refused with a reason; passphrases pass.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_PASSWORD_SCORE, passwordWeakness } from '../../../server/accounts/passwordPolicy.js';
import { createHarness, type Harness } from '../../support/harness.js';

describe('passwordWeakness', () => {
  it.each([
    ['0123456789', /sequences/],
    ['abcdefghij', /sequences/],
    ['password12', /commonly used password/],
    ['P@ssw0rd123', /similar to a commonly used password/],
    ['qwertyuiop', /frequently used password/],
    ['1qaz2wsx3edc', /commonly used password/],
    [' '.repeat(10), /Repeated characters/],
    ['aaaaaaaaaa', /Repeated characters/],
    ['Summer2024!', /less common/],
  ])('refuses %j and says why', (password, why) => {
    expect(passwordWeakness(password, [])).toMatch(new RegExp(`^too easy to guess\\. .*${why.source}`));
  });

  it('refuses the email, its parts, the name and the service name', () => {
    const personal = ['zorblax.quintavion@example.com', 'Zorblax Quintavion'];
    for (const p of ['zorblax.quintavion@example.com', 'quintavion2024', 'Zorblax!1843']) {
      expect(passwordWeakness(p, personal), p).toMatch(/personal or page related data/);
      // The same passwords for someone else are strong enough.
      expect(passwordWeakness(p, ['someone@example.com']), p).toBeNull();
    }
    expect(passwordWeakness('deviceid123', [])).toMatch(/personal or page related data/);
  });

  it.each(['correct horse battery', 'quiet-otter-lantern-47', 'Xy7#pL9!qR2$', 'long enough pw', 'another password'])('accepts %j', (password) => {
    expect(passwordWeakness(password, ['someone@example.com'])).toBeNull();
  });

  it('gives zxcvbn’s warning and every suggestion', () => {
    expect(passwordWeakness('password12', [])).toBe('too easy to guess. This is a commonly used password. Add more words that are less common.');
    expect(passwordWeakness('Summer2024!', [])).toBe('too easy to guess. Add more words that are less common. Capitalize more than the first letter.');
  });

  it('ignores personal data that is not there', () => {
    expect(passwordWeakness('quiet-otter-lantern-47', [undefined, 'someone@example.com'])).toBeNull();
    expect(passwordWeakness('quintavion2024', [undefined, 'Zorblax Quintavion'])).toMatch(/personal/);
  });

  it('takes the score threshold from zxcvbn (3: about 10^8 guesses)', () => {
    expect(MIN_PASSWORD_SCORE).toBe(3);
    // Score 2 (a common word plus a year): refused.
    expect(passwordWeakness('monkey1985', [])).not.toBeNull();
  });

  it('judges a very long password by its first 64 characters, in bounded time', () => {
    const started = performance.now();
    expect(passwordWeakness('ab1!'.repeat(256), [])).toMatch(/too easy/);
    expect(passwordWeakness('quiet-otter-lantern-47 '.repeat(40), [])).toBeNull();
    // A safety bound, not a benchmark: unbounded, such inputs take seconds.
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});

describe('POST /api/auth/signup with a weak password', () => {
  let h: Harness;
  let origin: string;
  beforeAll(async () => {
    h = await createHarness(import.meta.filename);
    origin = new URL(h.config.baseUrl).origin;
  });
  afterAll(async () => {
    await h.close();
  });

  it.each(['0123456789', 'password12', ' '.repeat(10), 'weak@example.com'])(
    'refuses %j with 400 naming the field and the reason, creating nothing',
    async (password) => {
      const res = await request(h.app).post('/api/auth/signup').set('origin', origin).send({ email: 'weak@example.com', password });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^password: too easy to guess\. \S/);
      expect(await h.store.db.collection('emails').countDocuments()).toBe(0);
    },
  );

  it('refuses a password made of the email or the name', async () => {
    for (const body of [
      { email: 'zorblax.quintavion@example.com', password: 'quintavion2024' },
      { email: 'someone@example.com', name: 'Zorblax Quintavion', password: 'Quintavion!1843' },
    ]) {
      const res = await request(h.app).post('/api/auth/signup').set('origin', origin).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^password: too easy to guess\. There should not be any personal or page related data\./);
    }
  });

  it('accepts a passphrase', async () => {
    const res = await request(h.app).post('/api/auth/signup').set('origin', origin).send({ email: 'strong@example.com', password: 'quiet-otter-lantern-47' });
    expect(res.status).toBe(201);
  });
});
