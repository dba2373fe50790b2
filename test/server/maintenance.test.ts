import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_TTL_MS } from '../../server/accounts/service.js';
import { SIGN_IN_LIMITS } from '../../server/accounts/throttle.js';
import { defaultSweeps, runSweeps } from '../../server/maintenance.js';
import { createHarness, type Harness } from '../support/harness.js';
import { signUp } from '../support/dashboard.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

describe('sweeps', () => {
  it('delete expired sessions and attempt-limit slots of past windows, and keep live ones', async () => {
    const old = await signUp(h);
    await h.http().post('/api/auth/login').set('origin', old.origin).send({ email: 'nobody@example.com', password: 'wrong password' });
    h.clock.advance(SESSION_TTL_MS - 60_000);
    const fresh = await signUp(h);
    h.clock.advance(120_000);
    expect(SIGN_IN_LIMITS.email.windowMs).toBeLessThan(SESSION_TTL_MS);
    const sessions = h.store.db.collection('sessions');
    const signInSlots = async () => (await h.store.db.collection('attemptSlots').find().toArray()).filter((s) => String(s._id).startsWith('signin:')).length;
    expect(await sessions.countDocuments()).toBe(2);
    // The failed sign-in's three slots, from 30 days ago.
    expect(await signInSlots()).toBe(3);
    await h.http().post('/api/auth/login').set('origin', old.origin).send({ email: 'nobody@example.com', password: 'wrong password' });
    await runSweeps(defaultSweeps(h.store, h.config.retentionDays), h.clock, pino({ level: 'silent' }));
    expect(await sessions.countDocuments()).toBe(1);
    expect(await signInSlots()).toBe(3);
    expect((await fresh.agent.get('/api/account')).status).toBe(200);
    expect((await old.agent.get('/api/account')).status).toBe(401);
  });
});
