// Webhooks against a real local receiver: endpoints and secrets through the
// dashboard API, signed deliveries that verifyWebhook accepts (and refuses
// when altered, with another secret, or replayed), retries with back-off
// (fails twice, delivered the third time), giving up after 24 hours,
// redelivery, a restart in the middle of a delivery or before the fan-out
// losing nothing, and the SSRF guard. Time moves by the injected clock.
import type { LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import type { LookupFunction } from 'node:net';
import request from 'supertest';
import { pino } from 'pino';
import { Collection } from 'mongodb';
import { monotonicFactory } from 'ulid';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../../clients/node/index.js';
import { WEBHOOK_LIMITS } from '../../../contract/webhooks.js';
import type { Services } from '../../../server/services.js';
import { SecretBox } from '../../../server/sealing/secretBox.js';
import { forbiddenAddress, guardedLookup } from '../../../server/webhooks/ssrf.js';
import { backoffMs, LEASE_MS, OUTBOX_GRACE_MS, RETRY_WINDOW_MS, WebhooksService } from '../../../server/webhooks/service.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { Metrics } from '../../../server/metrics/registry.js';
import { scripted, type Seen } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let strict: Harness;
// Deliveries as the metrics count them (deviceid_webhook_deliveries_total).
const metrics = new Metrics();
const delivered = async () =>
  Object.fromEntries((await metrics.webhookDeliveries.get()).values.map((v) => [String(v.labels.result), v.value])) as Partial<
    Record<'delivered' | 'failed' | 'gave_up', number>
  >;
let services: Services;
let c: Customer;
let live: string;
let secret: string;

beforeAll(async () => {
  const env = { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' };
  h = await createHarness(import.meta.filename, { ...env, WEBHOOKS_ALLOW_PRIVATE: 'true' }, undefined, { metrics });
  strict = await createHarness(import.meta.filename, env);
  services = h.app.locals.services as Services;
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
});
afterAll(async () => {
  await services.webhooks.idle();
  services.webhooks.stop();
  await h.close();
  await strict.close();
});

let seed = 900;
const identify = async (key = live) => {
  const res = await request(h.app)
    .post('/v1/identify')
    .set('x-api-key', key)
    .send(identifyBody(deviceValues(++seed)));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { requestId: string; visitorId: string };
};
const hooksPath = (customer: Customer, projectId = customer.projectId) => `/api/projects/${projectId}/webhooks`;
const addEndpoint = async (url: string, customer = c, projectId = customer.projectId) => {
  const res = await customer.agent.post(hooksPath(customer, projectId)).set('origin', customer.origin).send({ url });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { endpoint: { id: string; url: string; secretHint: string }; secret: string };
};
const removeEndpoint = async (id: string, customer = c, projectId = customer.projectId) => {
  expect((await customer.agent.delete(`${hooksPath(customer, projectId)}/${id}`).set('origin', customer.origin)).status).toBe(200);
};
const log = async (endpointId: string, customer = c, projectId = customer.projectId) => {
  const res = await customer.agent.get(`${hooksPath(customer, projectId)}/${endpointId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body.deliveries as {
    requestId: string;
    status: string;
    attempts: number;
    lastStatus: number | null;
    lastError: string | null;
    nextAttemptAt: string | null;
  }[];
};
const outboxEntries = () => h.store.db.collection('events').countDocuments({ _id: { $gt: '~o|', $lt: '~o|~' } as never });
/** The `_id`s of the insertMany that stored the event `requestId` (exactly one did). */
function insertedIds(insert: MockInstance<Collection['insertMany']>, requestId: string): string[] {
  const calls = insert.mock.calls.map(([docs]) => docs.map((d) => String(d._id))).filter((ids) => ids.includes(requestId));
  expect(calls).toHaveLength(1);
  return calls[0]!;
}
const verify = (s: Seen, key: string, now = h.clock.now()) => verifyWebhook(s.body, s.headers['deviceid-signature'], key, { now });

/**
 * A receiver answering with `statuses[n]` (the last one from then on); `hold`
 * keeps the n-th request unanswered. Its `url` is addressed by host name
 * (localhost, which resolves to loopback), as customers' endpoints are; `ipUrl`
 * by the IP literal.
 */
async function receiver(statuses: number[], hold?: number) {
  let arrived!: () => void;
  const first = new Promise<void>((r) => (arrived = r));
  const srv = await scripted((_req, n, res) => {
    arrived();
    if (n === hold) return; // never answered
    res.writeHead(statuses[Math.min(n, statuses.length - 1)]!);
    res.end();
  });
  return { ...srv, url: srv.url.replace('127.0.0.1', 'localhost'), ipUrl: srv.url, first };
}

/** One POST through http.request with the guard's lookup, as delivery makes it. */
function postThrough(url: string, lookup: LookupFunction, autoSelectFamily: boolean) {
  return new Promise<{ status: number | null; code: string | null; message: string | null }>((resolve) => {
    // A new connection each time: a pooled keep-alive socket would skip the lookup.
    const options = { method: 'POST', lookup, agent: false, autoSelectFamily }; // autoSelectFamily reaches net.connect; @types/node's request options omit it
    const req = httpRequest(url, options, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? null, code: null, message: null }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: null, code: err.code ?? null, message: err.message }));
    req.end('{}');
  });
}

describe('webhook endpoints (dashboard API)', () => {
  it('creates an endpoint with a signing secret shown once, stored encrypted; rotates it; removes it', async () => {
    const created = await addEndpoint('https://hooks.example.com/deviceid');
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.endpoint).toMatchObject({
      id: expect.stringMatching(/^whe_/),
      url: 'https://hooks.example.com/deviceid',
      secretHint: created.secret.slice(-4),
    });
    const listed = await c.agent.get(hooksPath(c));
    expect(listed.body.endpoints).toEqual([created.endpoint]);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);
    const stored = await h.store.webhooks.endpoint(created.endpoint.id);
    expect(stored?.secret).toMatch(/^sb1:/);
    expect(JSON.stringify(stored)).not.toContain(created.secret);
    expect((await h.store.projects.byId(c.projectId))?.webhookEndpoints).toBe(1);

    const rotated = await c.agent
      .post(`${hooksPath(c)}/${created.endpoint.id}/secret`)
      .set('origin', c.origin)
      .send({});
    expect(rotated.status).toBe(201);
    expect(rotated.body.secret).not.toBe(created.secret);
    expect(rotated.body.endpoint.secretHint).toBe(rotated.body.secret.slice(-4));

    // Other accounts, cross-site requests and bad input.
    const other = await signUp(h);
    const notOurs = await other.agent.get(hooksPath(c));
    expect([notOurs.status, notOurs.body]).toEqual([404, { error: 'Project not found', code: 'project_not_found' }]);
    const notTheirs = await other.agent.delete(`${hooksPath(other)}/${created.endpoint.id}`).set('origin', other.origin);
    expect([notTheirs.status, notTheirs.body]).toEqual([404, { error: 'Webhook endpoint not found', code: 'webhook_endpoint_not_found' }]);
    expect((await c.agent.post(hooksPath(c)).send({ url: 'https://a.example' })).status).toBe(403);
    for (const url of ['not a url', 'ftp://files.example.com/', 'https://user:pw@hooks.example.com/', 'x'.repeat(3000)]) {
      const res = await c.agent.post(hooksPath(c)).set('origin', c.origin).send({ url });
      expect(res.status, url).toBe(400);
      expect(res.body.error, url).toMatch(/^url: /);
    }
    expect(h.logs()).not.toContain(created.secret);

    await removeEndpoint(created.endpoint.id);
    expect((await c.agent.get(hooksPath(c))).body.endpoints).toEqual([]);
    expect((await h.store.projects.byId(c.projectId))?.webhookEndpoints).toBe(0);
  });

  it(`allows at most ${WEBHOOK_LIMITS.endpointsPerProject} endpoints per project`, async () => {
    const s = await signUp(h);
    const made = [];
    for (let i = 0; i < WEBHOOK_LIMITS.endpointsPerProject; i++) made.push(await addEndpoint(`https://hooks.example.com/${i}`, s));
    const refused = await s.agent.post(hooksPath(s)).set('origin', s.origin).send({ url: 'https://hooks.example.com/one-more' });
    expect([refused.status, refused.body]).toEqual([
      409,
      { error: `A project can have at most ${WEBHOOK_LIMITS.endpointsPerProject} webhook endpoints`, code: 'limit_reached' },
    ]);
    await removeEndpoint(made[0]!.endpoint.id, s);
    await addEndpoint('https://hooks.example.com/one-more', s);
    expect((await h.store.projects.byId(s.projectId))?.webhookEndpoints).toBe(WEBHOOK_LIMITS.endpointsPerProject);
  });

  it(`lists the newest ${WEBHOOK_LIMITS.logSize} deliveries of an endpoint`, async () => {
    const s = await signUp(h);
    const ep = await addEndpoint('https://hooks.example.com/log', s);
    const next = monotonicFactory();
    const requestIds = Array.from({ length: WEBHOOK_LIMITS.logSize + 5 }, () => `req_${next(h.clock.now())}`);
    for (const requestId of requestIds) {
      const at = h.clock.now();
      await h.store.webhooks.createDelivery({
        _id: `${ep.endpoint.id}|${requestId}`,
        accountId: s.accountId,
        endpointId: ep.endpoint.id,
        requestId,
        status: 'delivered',
        attempts: 1,
        since: at,
        nextAttemptAt: null,
        lastAttemptAt: at,
        lastStatus: 200,
        lastError: null,
        deliveredAt: at,
        createdAt: at,
      });
    }
    expect((await log(ep.endpoint.id, s)).map((d) => d.requestId)).toEqual(requestIds.reverse().slice(0, WEBHOOK_LIMITS.logSize));
    const unknown = await s.agent
      .post(`${hooksPath(s)}/${ep.endpoint.id}/deliveries/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z/redeliver`)
      .set('origin', s.origin)
      .send({});
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Delivery not found', code: 'delivery_not_found' }]);
    await removeEndpoint(ep.endpoint.id, s);
  });

  it('refuses loopback, private, link-local and metadata targets unless WEBHOOKS_ALLOW_PRIVATE=true', async () => {
    const s = await signUp(strict);
    const refused = [
      ...[
        'http://127.0.0.1:8080/hook',
        'http://localhost:3000/',
        'http://[::1]/',
        'http://10.1.2.3/',
        'http://192.168.1.1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://[fe80::1]/',
        'http://100.64.0.1/',
        'http://[::ffff:127.0.0.1]/',
      ],
      // IPv6 forms that land on a private IPv4 address: NAT64 (well-known and local-use), 6to4, Teredo (server or client).
      ...[
        'http://[64:ff9b::7f00:1]/',
        'http://[64:ff9b::a00:1]/',
        'http://[64:ff9b::a9fe:a9fe]/',
        'http://[64:ff9b:1::a00:1]/',
        'http://[2002:7f00:1::1]/',
        'http://[2002:a9fe:a9fe::]/',
      ],
      ...['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'http://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/'],
    ];
    for (const url of refused) {
      const res = await s.agent.post(hooksPath(s)).set('origin', s.origin).send({ url });
      expect(res.status, url).toBe(400);
      expect(res.body.error, url).toBe('url: points at a loopback, private or link-local address');
    }
    for (const url of [
      'https://8.8.8.8/hook',
      'https://[64:ff9b::808:808]/hook',
      'https://[2002:808:808::1]/hook',
      'https://[2001:0:808:808:8000:63bf:f7f7:f7f7]/',
      'https://[2606:4700::1111]/',
    ]) {
      expect((await s.agent.post(hooksPath(s)).set('origin', s.origin).send({ url })).status, url).toBe(201);
    }
  });

  it('checks every address a host name resolves to, at connection time, through http.request as delivery calls it', async () => {
    const rx = await receiver([200]);
    try {
      // Node 20 asks the lookup for every address (autoSelectFamily); older code paths for one.
      for (const [i, autoSelectFamily] of [true, false].entries()) {
        expect(await postThrough(`${rx.url}/hook`, guardedLookup(false), autoSelectFamily)).toMatchObject({
          status: null,
          code: 'EPRIVATE',
          message: 'localhost points at a loopback, private or link-local address',
        });
        expect(rx.seen).toHaveLength(i);
        expect(await postThrough(`${rx.url}/hook`, guardedLookup(true), autoSelectFamily)).toMatchObject({ status: 200 });
      }
      expect(rx.seen).toHaveLength(2);

      // One private address among public ones refuses the name; the connection goes only to checked addresses.
      const resolving =
        (...addresses: string[]) =>
        (_name: string, _options: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
          cb(
            null,
            addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
          );
      const port = new URL(rx.url).port;
      for (const mixed of [['8.8.8.8', '127.0.0.1'], ['2606:4700::1111', '64:ff9b::7f00:1'], ['2002:7f00:1::1']]) {
        expect(await postThrough(`http://hooks.test:${port}/`, guardedLookup(false, resolving(...mixed)), true), mixed.join()).toMatchObject({
          code: 'EPRIVATE',
        });
      }
      expect(await postThrough(`http://hooks.test:${port}/`, guardedLookup(true, resolving('127.0.0.1')), true)).toMatchObject({ status: 200 });
      const one = await new Promise<unknown[]>((resolve) =>
        guardedLookup(false, resolving('8.8.8.8', '2606:4700::1111'))('hooks.test', {}, (...args) => resolve(args)),
      );
      expect(one).toEqual([null, '8.8.8.8', 4]);
      const all = await new Promise<unknown[]>((resolve) =>
        guardedLookup(false, resolving('8.8.8.8', '2606:4700::1111'))('hooks.test', { all: true }, (...args) => resolve(args)),
      );
      expect(all).toEqual([
        null,
        [
          { address: '8.8.8.8', family: 4 },
          { address: '2606:4700::1111', family: 6 },
        ],
      ]);
      const none = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
        guardedLookup(false, resolving())('hooks.test', { all: true }, (err) => resolve(err)),
      );
      expect(none?.code).toBe('ENOTFOUND');
      expect(rx.seen).toHaveLength(3);
    } finally {
      await rx.close();
    }
  });

  it('judges an IPv6 address that carries an IPv4 one by the IPv4 address it lands on', () => {
    const cases: [string, boolean][] = [
      ['64:ff9b::7f00:1', true],
      ['64:ff9b::a9fe:a9fe', true],
      ['64:ff9b::808:808', false],
      ['64:ff9b:1:808:8:8:808:808', false], // local-use: every RFC 6052 reading public
      ['64:ff9b:1:a00:1::', true], // local-use /48: 10.0.0.1
      ['2002:c0a8:101::1', true],
      ['2002:808:808::1', false],
      ['2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7', true], // Teredo server 169.254.169.254
      ['2001:0:808:808:8000:63bf:f5ff:fefe', true], // Teredo client 10.0.1.1
      ['2001:0:808:808:8000:63bf:f7f7:f7f7', false],
      ['::ffff:10.0.0.1', true],
      ['2001:db8::1', true],
      ['not an address', true],
    ];
    for (const [address, forbidden] of cases) expect(forbiddenAddress(address), address).toBe(forbidden);
  });
});

describe('delivery', () => {
  it('costs identify nothing for a project without endpoints: no outbox entry is written', async () => {
    const insert = vi.spyOn(Collection.prototype, 'insertMany');
    try {
      const r = await identify();
      await services.webhooks.idle();
      const written = insertedIds(insert, r.requestId);
      expect(written).toContain(`${c.accountId}|a|${r.requestId.slice(4)}`);
      expect(written.filter((id) => id.startsWith('~o|'))).toEqual([]);
    } finally {
      insert.mockRestore();
    }
  });

  it('POSTs the full event, signed: verifyWebhook accepts it, and refuses it altered, with another secret, or replayed', async () => {
    const rx = await receiver([200]);
    const ep = await addEndpoint(`${rx.url}/hook`);
    const insert = vi.spyOn(Collection.prototype, 'insertMany');
    try {
      const r = await identify();
      await services.webhooks.idle();
      // The outbox entry rode in the event's own insertMany, after the event (and went once fanned out).
      const written = insertedIds(insert, r.requestId);
      expect(written[0]).toBe(r.requestId);
      expect(written.filter((id) => id === `~o|${r.requestId}`)).toHaveLength(1);
      insert.mockRestore();
      expect(rx.seen).toHaveLength(1);
      const [s] = rx.seen as [Seen];
      expect(s.method).toBe('POST');
      expect(s.url).toBe('/hook');
      expect(s.headers['content-type']).toBe('application/json');
      expect(s.headers['deviceid-delivery']).toBe(r.requestId);
      expect(s.headers['deviceid-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const event = verify(s, ep.secret);
      // The event as GET /v1/events answers it, but its related visitors' count (a read per delivery it need not cost).
      const { relatedVisitors, ...full } = (await request(h.app).get(`/v1/events/${r.requestId}`).set('authorization', `Bearer ${secret}`)).body;
      expect(relatedVisitors).toBe(0);
      expect(event).toEqual(full);
      expect(event.visitorId).toBe(r.visitorId);

      expect(() => verify({ ...s, body: s.body.replace(r.visitorId, 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z') }, ep.secret)).toThrow(WebhookVerificationError);
      expect(() => verify(s, `${ep.secret}x`)).toThrow(/does not match/);
      expect(() => verify(s, ep.secret, h.clock.now() + 301_000)).toThrow(/tolerance/);
      expect(() => verify(s, ep.secret, h.clock.now() - 301_000)).toThrow(/tolerance/);
      expect(() => verify({ ...s, headers: {} }, ep.secret)).toThrow(/Missing/);
      expect(() => verify({ ...s, headers: { 'deviceid-signature': 't=1,v1=zz' } }, ep.secret)).toThrow(/Malformed/);

      expect(await log(ep.endpoint.id)).toEqual([
        expect.objectContaining({ requestId: r.requestId, status: 'delivered', attempts: 1, lastStatus: 200, lastError: null, nextAttemptAt: null }),
      ]);
      expect(await outboxEntries()).toBe(0);

      // Deleting the visitor deletes its deliveries from the log too.
      expect((await request(h.app).delete(`/v1/visitors/${r.visitorId}`).set('authorization', `Bearer ${secret}`)).status).toBe(202);
      await services.deletions.idle();
      expect(await log(ep.endpoint.id)).toEqual([]);
    } finally {
      insert.mockRestore();
      await removeEndpoint(ep.endpoint.id);
      await rx.close();
    }
  });

  it('retries with exponential back-off: a receiver failing twice gets the event on the third try', async () => {
    const rx = await receiver([500, 503, 200]);
    const ep = await addEndpoint(rx.url);
    const before = await delivered();
    try {
      const r = await identify();
      await services.webhooks.idle();
      expect(rx.seen).toHaveLength(1);
      let [d] = await log(ep.endpoint.id);
      expect(d).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastStatus: 500,
        lastError: 'HTTP 500',
        nextAttemptAt: new Date(h.clock.now() + backoffMs(1)).toISOString(),
      });

      expect(await services.webhooks.tick()).toBe(0); // not due yet
      // A queue entry read before another process made the attempt (here: the first one, again) is obsolete, not a second attempt.
      await h.store.webhooks.enqueue(h.clock.now(), `${ep.endpoint.id}|${r.requestId}`);
      expect(await services.webhooks.tick()).toBe(0);
      expect(rx.seen).toHaveLength(1);
      h.clock.advance(backoffMs(1));
      expect(await services.webhooks.tick()).toBe(1);
      [d] = await log(ep.endpoint.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 2, lastStatus: 503, nextAttemptAt: new Date(h.clock.now() + backoffMs(2)).toISOString() });
      expect(backoffMs(2)).toBe(2 * backoffMs(1));

      h.clock.advance(backoffMs(2));
      expect(await services.webhooks.tick()).toBe(1);
      [d] = await log(ep.endpoint.id);
      expect(d).toMatchObject({ requestId: r.requestId, status: 'delivered', attempts: 3, lastStatus: 200, lastError: null, nextAttemptAt: null });
      expect(rx.seen).toHaveLength(3);
      // The same event every time, each signed afresh.
      expect(new Set(rx.seen.map((s) => s.body)).size).toBe(1);
      expect(rx.seen.map((s) => s.headers['deviceid-attempt'])).toEqual(['1', '2', '3']);
      const after = await delivered();
      expect([(after.failed ?? 0) - (before.failed ?? 0), (after.delivered ?? 0) - (before.delivered ?? 0)]).toEqual([2, 1]);
      expect(verify(rx.seen[2]!, ep.secret).requestId).toBe(r.requestId);
      expect(await services.webhooks.tick()).toBe(0);

      // Redeliver from the log: delivered again.
      const again = await c.agent
        .post(`${hooksPath(c)}/${ep.endpoint.id}/deliveries/${r.requestId}/redeliver`)
        .set('origin', c.origin)
        .send({});
      expect(again.status).toBe(202);
      expect(again.body.status).toBe('pending');
      await services.webhooks.idle();
      expect(rx.seen).toHaveLength(4);
      expect((await log(ep.endpoint.id))[0]).toMatchObject({ status: 'delivered', attempts: 4 });
      expect(
        (
          await c.agent
            .post(`${hooksPath(c)}/${ep.endpoint.id}/deliveries/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z/redeliver`)
            .set('origin', c.origin)
            .send({})
        ).status,
      ).toBe(404);
    } finally {
      await removeEndpoint(ep.endpoint.id);
      await rx.close();
    }
  });

  it('gives up after 24 hours of failures', async () => {
    const rx = await receiver([500]);
    const ep = await addEndpoint(rx.url);
    try {
      await identify();
      await services.webhooks.idle();
      const start = h.clock.now();
      for (let i = 0; i < 100; i++) {
        const [d] = await log(ep.endpoint.id);
        if (d!.status !== 'pending') break;
        h.clock.set(Date.parse(d!.nextAttemptAt!));
        await services.webhooks.tick();
      }
      const [d] = await log(ep.endpoint.id);
      expect(d).toMatchObject({ status: 'failed', lastStatus: 500, nextAttemptAt: null });
      expect(h.clock.now() - start).toBeLessThanOrEqual(RETRY_WINDOW_MS);
      expect(h.clock.now() - start).toBeGreaterThan(RETRY_WINDOW_MS - backoffMs(20));
      expect(rx.seen).toHaveLength(d!.attempts);
      expect((await delivered()).gave_up).toBe(1);
    } finally {
      await removeEndpoint(ep.endpoint.id);
      await rx.close();
    }
  });

  it("deleting a visitor's data removes its events' deliveries with their queue entries and claims", async () => {
    const rx = await receiver([500]);
    const ep = await addEndpoint(rx.url);
    const mentions = async (requestId: string) => {
      const found = new Set<string>();
      for (const name of ['webhookDeliveries', 'webhookQueue', 'webhookClaims']) {
        for (const doc of await h.store.db.collection(name).find({}).toArray()) if (JSON.stringify(doc).includes(requestId)) found.add(name);
      }
      return [...found];
    };
    try {
      const kept = await identify();
      const r = await identify();
      await services.webhooks.idle();
      // Each failed once: a pending delivery, its next queue entry, and the claim of the attempt made.
      expect(await mentions(r.requestId)).toEqual(['webhookDeliveries', 'webhookQueue', 'webhookClaims']);
      expect(await mentions(kept.requestId)).toEqual(['webhookDeliveries', 'webhookQueue', 'webhookClaims']);

      expect((await request(h.app).delete(`/v1/visitors/${r.visitorId}`).set('authorization', `Bearer ${secret}`)).status).toBe(202);
      await services.deletions.idle();
      expect(await mentions(r.requestId)).toEqual([]);
      // Another visitor's bookkeeping stays, and its next attempt is still made.
      expect(await mentions(kept.requestId)).toEqual(['webhookDeliveries', 'webhookQueue', 'webhookClaims']);
      h.clock.advance(backoffMs(1));
      expect(await services.webhooks.tick()).toBe(1);
      expect(rx.seen.map((s) => s.headers['deviceid-delivery'])).toEqual([kept.requestId, r.requestId, kept.requestId]);
    } finally {
      await removeEndpoint(ep.endpoint.id);
      await rx.close();
    }
  });

  it('loses nothing when the process stops in the middle of a delivery, or between identify and the fan-out', async () => {
    const rx = await receiver([200], 0); // the first request is never answered
    const ep = await addEndpoint(rx.url);
    try {
      const r = await identify();
      await rx.first;
      // The process goes away while the receiver holds the request.
      services.webhooks.stop();
      await services.webhooks.idle();
      expect(await log(ep.endpoint.id)).toEqual([expect.objectContaining({ status: 'pending', attempts: 0 })]);

      // Identify keeps writing outbox entries while nothing fans them out.
      const r2 = await identify();
      expect(await outboxEntries()).toBe(1);

      // The next process: the dead one's claim holds until its lease window ends.
      const next = new WebhooksService(
        h.store,
        new SecretBox(h.config.serverSecret),
        services.events,
        h.clock,
        pino({ level: 'silent' }),
        true,
        services.audit,
      );
      expect(await next.tick()).toBe(0);
      expect(await next.recover()).toBe(0); // the outbox entry is still young: another process may be fanning it out
      h.clock.advance(Math.max(LEASE_MS, OUTBOX_GRACE_MS) + 1);
      expect(await next.recover()).toBe(1);
      expect(await next.tick()).toBe(2);
      await next.idle();
      const byRequest = Object.fromEntries((await log(ep.endpoint.id)).map((d) => [d.requestId, d]));
      expect(byRequest[r.requestId]).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(byRequest[r2.requestId]).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(await outboxEntries()).toBe(0);
      const received = rx.seen.map((s) => s.headers['deviceid-delivery']);
      expect(received.filter((id) => id === r.requestId)).toHaveLength(2); // once held by the dead process, once delivered
      expect(received.filter((id) => id === r2.requestId)).toHaveLength(1);
      for (const s of rx.seen.slice(1)) expect(verify(s, ep.secret).requestId).toMatch(/^req_/);
      next.stop();
    } finally {
      await removeEndpoint(ep.endpoint.id);
      await rx.close();
    }
  });

  it('checks the address again before each delivery: a process that refuses private targets sends nothing there, by name or by address', async () => {
    // services.webhooks was stopped above: identify writes the outbox entry, the strict process delivers.
    const rx = await receiver([200]);
    const byName = await addEndpoint(rx.url);
    const byAddress = await addEndpoint(rx.ipUrl);
    const strictService = new WebhooksService(
      h.store,
      new SecretBox(h.config.serverSecret),
      services.events,
      h.clock,
      pino({ level: 'silent' }),
      false,
      services.audit,
    );
    try {
      const r = await identify();
      await strictService.fanOut({ _id: `~o|${r.requestId}`, r: r.requestId, a: c.accountId, p: c.projectId });
      expect(await strictService.tick()).toBe(2);
      expect(rx.seen).toEqual([]);
      for (const ep of [byName, byAddress]) {
        expect(await log(ep.endpoint.id)).toEqual([
          expect.objectContaining({
            requestId: r.requestId,
            status: 'pending',
            attempts: 1,
            lastStatus: null,
            lastError: 'url: points at a loopback, private or link-local address',
          }),
        ]);
      }
    } finally {
      strictService.stop();
      await removeEndpoint(byName.endpoint.id);
      await removeEndpoint(byAddress.endpoint.id);
      await rx.close();
    }
  });
});
