// Keys, projects and accounts are cached per process for CACHE_TTL_MS: the
// process that changes one sees the change at once, another process within
// the TTL. Two apps on one database stand for two processes.
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../../server/clock.js';
import { loadConfig } from '../../../server/config.js';
import { loadEdge } from '../../../server/edge/analyze.js';
import { createApp } from '../../../server/http/app.js';
import { Store } from '../../../server/store/index.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, TEST_ENV, type Harness } from '../../support/harness.js';
import { identifyBody } from '../../support/signals.js';

const TTL = 2_000;
const ENV = { CACHE_TTL_MS: String(TTL), PLANS: '{"free":{"rps":1000,"monthly":100000},"builder":{"rps":1,"monthly":100000}}' };

let h: Harness;
let other: { app: ReturnType<typeof createApp>; store: Store; clock: ManualClock; close(): void };
beforeAll(async () => {
  h = await createHarness(import.meta.filename, ENV);
  const config = loadConfig({ ...TEST_ENV, ...ENV });
  const clock = new ManualClock(h.clock.now());
  const store = await Store.open({ uri: inject('mongoUri'), dbName: h.store.db.databaseName, cacheTtlMs: TTL, now: () => clock.now() });
  const logger = pino({ level: 'silent' });
  const edge = await loadEdge(config, logger);
  other = { app: createApp({ config, store, clock, logger, edge }), store, clock, close: () => edge.close() };
});
afterAll(async () => {
  other.close();
  await other.store.close();
  await h.close();
});

const identify = (app: ReturnType<typeof createApp>, key: string, url = 'https://shop.example.com/') =>
  request(app).post('/v1/identify').set('x-api-key', key).send(identifyBody({}, { url }));

describe('caches of keys, projects and accounts', () => {
  it('a revoked key stops at once in the revoking process and within the TTL in another', async () => {
    const c = await signUp(h);
    const key = await c.key('live');
    const id = (await c.agent.get(`/api/projects/${c.projectId}/keys`)).body.keys.find((k: { type: string }) => k.type === 'live').id;
    expect((await identify(h.app, key)).status).toBe(200);
    expect((await identify(other.app, key)).status).toBe(200);

    expect((await c.agent.delete(`/api/projects/${c.projectId}/keys/${id}`).set('origin', c.origin)).status).toBe(200);
    expect((await identify(h.app, key)).status).toBe(401);
    other.clock.advance(TTL - 1);
    expect((await identify(other.app, key)).status).toBe(200);
    other.clock.advance(1);
    expect((await identify(other.app, key)).status).toBe(401);
  });

  it('an allowlist change holds at once where it was made and within the TTL elsewhere', async () => {
    const c = await signUp(h);
    const key = await c.key('live');
    expect((await identify(other.app, key, 'https://evil.example.net/')).status).toBe(200);
    await c.agent
      .patch(`/api/projects/${c.projectId}`)
      .set('origin', c.origin)
      .send({ allowedDomains: ['shop.example.com'] });
    expect((await identify(h.app, key, 'https://evil.example.net/')).status).toBe(403);
    expect((await identify(other.app, key, 'https://evil.example.net/')).status).toBe(200);
    other.clock.advance(TTL);
    expect((await identify(other.app, key, 'https://evil.example.net/')).status).toBe(403);
    expect((await identify(other.app, key)).status).toBe(200);
  });

  it('a plan change applies at once where it was made and within the TTL elsewhere', async () => {
    const c = await signUp(h);
    const key = await c.key('test');
    expect((await identify(other.app, key)).status).toBe(200);
    await h.store.accounts.setPlan(c.accountId, 'builder');
    h.clock.advance(1_000);
    other.clock.advance(1_000);
    const here = [await identify(h.app, key), await identify(h.app, key)].map((r) => r.status);
    expect(here).toEqual([200, 429]);
    const there = [await identify(other.app, key), await identify(other.app, key)].map((r) => r.status);
    expect(there).toEqual([200, 200]);
    other.clock.advance(TTL);
    expect([await identify(other.app, key), await identify(other.app, key)].map((r) => r.status)).toEqual([200, 429]);
  });

  it('CACHE_TTL_MS=0 reads the database every time', async () => {
    const store = await Store.open({ uri: inject('mongoUri'), dbName: h.store.db.databaseName, cacheTtlMs: 0, now: () => h.clock.now() });
    try {
      const c = await signUp(h);
      await store.accounts.account(c.accountId);
      await h.store.accounts.setPlan(c.accountId, 'builder');
      expect((await store.accounts.account(c.accountId))?.plan).toBe('builder');
    } finally {
      await store.close();
    }
  });
});
