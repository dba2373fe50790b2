// What one account can create: projects, active keys per project, keys per
// day (so creating and revoking cannot pile keys up) and sessions per user.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_LIMITS } from '../../../contract/account.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

describe('per-account limits', () => {
  it(`allows ${ACCOUNT_LIMITS.projects} projects per account, also when created all at once`, async () => {
    const c = await signUp(h);
    const create = (i: number) =>
      c.agent
        .post('/api/projects')
        .set('origin', c.origin)
        .send({ name: `p${i}` });
    const results = await Promise.all(Array.from({ length: ACCOUNT_LIMITS.projects + 5 }, (_, i) => create(i)));
    // The Default project counts.
    expect(results.filter((r) => r.status === 201)).toHaveLength(ACCOUNT_LIMITS.projects - 1);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(6);
    expect(refused[0]!.body).toEqual({ error: `An account can have at most ${ACCOUNT_LIMITS.projects} projects`, code: expect.any(String) });
    expect((await c.agent.get('/api/projects')).body.projects).toHaveLength(ACCOUNT_LIMITS.projects);
    // Another account is not affected.
    const other = await signUp(h);
    expect((await other.agent.post('/api/projects').set('origin', other.origin).send({ name: 'x' })).status).toBe(201);
  });

  it(`allows ${ACCOUNT_LIMITS.activeKeysPerProject} active keys per project; revoking one makes room`, async () => {
    const c = await signUp(h);
    const create = () => c.agent.post(`/api/projects/${c.projectId}/keys`).set('origin', c.origin).send({ name: 'k', type: 'live' });
    const results = await Promise.all(Array.from({ length: ACCOUNT_LIMITS.activeKeysPerProject + 3 }, create));
    expect(results.filter((r) => r.status === 201)).toHaveLength(ACCOUNT_LIMITS.activeKeysPerProject);
    const refused = results.find((r) => r.status === 409)!;
    expect(refused.body).toEqual({
      error: `A project can have at most ${ACCOUNT_LIMITS.activeKeysPerProject} active keys; revoke one first`,
      code: expect.any(String),
    });
    const first = results.find((r) => r.status === 201)!.body.apiKey.id;
    expect((await c.agent.delete(`/api/projects/${c.projectId}/keys/${first}`).set('origin', c.origin)).status).toBe(200);
    expect((await create()).status).toBe(201);
    // Another project of the account has its own room.
    const project = (await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'second' })).body.id;
    expect((await c.agent.post(`/api/projects/${project}/keys`).set('origin', c.origin).send({ name: 'k', type: 'test' })).status).toBe(201);
  });

  it(`allows ${ACCOUNT_LIMITS.keysPerDay} keys created per account a day, revoked ones included; refused ones do not count`, async () => {
    const c = await signUp(h);
    const create = (name: string) => c.agent.post(`/api/projects/${c.projectId}/keys`).set('origin', c.origin).send({ name, type: 'test' });
    const revoke = (id: string) => c.agent.delete(`/api/projects/${c.projectId}/keys/${id}`).set('origin', c.origin);
    const active: string[] = [];
    for (let i = 0; i < ACCOUNT_LIMITS.activeKeysPerProject; i++) active.push((await create(`k${i}`)).body.apiKey.id);
    for (let i = 0; i < 3; i++) expect((await create('refused')).status).toBe(409);
    for (let created = active.length; created < ACCOUNT_LIMITS.keysPerDay; created++) {
      await revoke(active.shift()!);
      const res = await create(`k${created}`);
      expect(res.status).toBe(201);
      active.push(res.body.apiKey.id);
    }
    await revoke(active.shift()!);
    const refused = await create('one more');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: `At most ${ACCOUNT_LIMITS.keysPerDay} keys can be created a day; try again tomorrow`, code: expect.any(String) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    h.clock.advance(24 * 3600_000);
    expect((await create('tomorrow')).status).toBe(201);
    // About 230 requests: 7-12 s beside other test files on two cores.
  }, 60_000);

  it(`keeps a user's ${ACCOUNT_LIMITS.sessionsPerUser} newest sessions: signing in again ends the oldest`, async () => {
    const c = await signUp(h, 'sessions@example.com');
    const agents = [c.agent];
    for (let i = 1; i <= ACCOUNT_LIMITS.sessionsPerUser; i++) {
      h.clock.advance(1000);
      const agent = request.agent(h.app);
      const res = await agent.post('/api/auth/login').set('origin', c.origin).send({ email: 'sessions@example.com', password: 'correct horse battery' });
      expect(res.status).toBe(200);
      agents.push(agent);
    }
    const statuses = await Promise.all(agents.map(async (a) => (await a.get('/api/account')).status));
    expect(statuses).toEqual([401, ...Array(ACCOUNT_LIMITS.sessionsPerUser).fill(200)]);
  });
});
