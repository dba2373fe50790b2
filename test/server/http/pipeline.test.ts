// The request pipeline every route shares: ids, 404, 413, malformed JSON,
// authentication before validation, validation errors naming the field, 500;
// pipelined requests over a real connection.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UNANSWERED } from '../../../server/http/pipelining.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp } from '../../support/httpServer.js';
import { seedKey } from '../../support/keys.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

describe('request pipeline', () => {
  it('answers unknown paths with 404 {error} and a request id', async () => {
    const res = await h.http().get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found', code: expect.any(String) });
    expect(res.headers['x-request-id']).toMatch(/^rid_[0-9A-Z]{26}$/);
  });

  it('reads no body sent where no route takes one: 404 however malformed or large', async () => {
    for (const [method, path] of [
      ['post', '/nothing-here'],
      ['put', '/healthz'],
    ] as const) {
      const send = (body: string) => h.http()[method](path).set('content-type', 'application/json').send(body);
      const malformed = await send('{"pad": ');
      expect(malformed.status).toBe(404);
      expect(malformed.body).toEqual({ error: 'Not found', code: expect.any(String) });
      expect((await send(JSON.stringify({ pad: 'x'.repeat(300 * 1024) }))).status).toBe(404);
    }
  });

  it('answers an oversized body with 413 {error}', async () => {
    const big = JSON.stringify({ signals: {}, timestamp: 1, pad: 'x'.repeat(300 * 1024) });
    const res = await h.http().post('/v1/identify').set('content-type', 'application/json').send(big);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/too large/);
  });

  it('answers malformed JSON with 400 {error}', async () => {
    const res = await h.http().post('/v1/identify').set('content-type', 'application/json').send('{"signals": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid JSON body', code: expect.any(String) });
  });

  it('checks the API key before the body: no key and a bad body is 401', async () => {
    const res = await h.http().post('/v1/identify').send({ nonsense: true });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or missing API key', code: expect.any(String) });
  });

  it.each([
    ['malformed', 'svc_live_short'],
    ['bad checksum', 'svc_live_' + 'a'.repeat(38)],
  ])('rejects a %s key with 401', async (_what, key) => {
    const res = await h.http().post('/v1/identify').set('x-api-key', key).send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or missing API key', code: expect.any(String) });
  });

  it('rejects a well-formed key that does not exist with 401', async () => {
    const { generateKey } = await import('../../../server/keys/format.js');
    const res = await h.http().post('/v1/identify').set('x-api-key', generateKey('live')).send({});
    expect(res.status).toBe(401);
  });

  it('with a valid key, names the offending field in a 400', async () => {
    const key = await seedKey(h.store, 'live');
    const missing = await h.http().post('/v1/identify').set('x-api-key', key).send({ timestamp: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'signals: Required', code: expect.any(String) });

    const wrongShape = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', key)
      .send({ timestamp: 1, signals: { canvas: { value: { hash: 'abc', isFarbled: 'no' }, duration: 3 } } });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.error).toMatch(/^signals\.canvas\.value\.isFarbled: /);
  });

  it('turns an unexpected failure into 500 with an incident id that is also logged, without a stack', async () => {
    const key = await seedKey(h.store, 'secret');
    const broken = await createHarness(import.meta.filename);
    await broken.store.close(); // every database call now throws
    try {
      const res = await broken.http().get('/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('authorization', `Bearer ${key}`);
      expect(res.status).toBe(500);
      const incident = res.headers['x-request-id'];
      expect(res.body).toEqual({ error: `Internal error (incident ${incident})`, code: expect.any(String) });
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts/);
      expect(broken.logs()).toContain(incident);
      expect(broken.logs()).not.toContain(key);
    } finally {
      await broken.close().catch(() => {});
    }
  });

  it('never logs keys or cookies', async () => {
    const key = await seedKey(h.store, 'live');
    await h.http().post('/v1/identify').set('x-api-key', key).set('cookie', 'deviceid_session=topsecretcookie').send({});
    expect(h.logs()).not.toContain(key);
    expect(h.logs()).not.toContain('topsecretcookie');
  });

  it('never logs query strings or device-flow user codes', async () => {
    await h.http().get('/api/cli/grants/BCDF-GHJK');
    await h.http().get('/v1/events?linkedId=secret-order-77');
    expect(h.logs()).toContain('/api/cli/grants/:userCode');
    expect(h.logs()).not.toContain('BCDF-GHJK');
    expect(h.logs()).not.toContain('secret-order-77');
  });

  it('logs the route template, never the visitor or request id in a path (nor an id-shaped segment of an unknown path)', async () => {
    const visitorId = 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z';
    const requestId = 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y7A';
    await h.http().get(`/v1/demo/visits/${visitorId}`);
    await h.http().get(`/v1/events/${requestId}`);
    await h.http().delete(`/v1/visitors/${visitorId}`);
    await h.http().get(`/nothing/here/${requestId}`);
    const paths = h
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { path?: string }).path);
    expect(paths).toEqual(expect.arrayContaining(['/v1/demo/visits/:visitorId', '/v1/events/:requestId', '/v1/visitors/:visitorId', '/nothing/here/:id']));
    expect(h.logs()).not.toContain(visitorId.slice(3));
    expect(h.logs()).not.toContain(requestId.slice(4));
  });
});

describe('browser-facing routes', () => {
  it('serves the agent bundle at /agent.js', async () => {
    const res = await h.http().get('/agent.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.text.slice(0, 40)).toMatch(/^("use strict";)?var DeviceId=/);
  });

  it('answers the CORS preflight of identify for any origin', async () => {
    const res = await h
      .http()
      .options('/v1/identify')
      .set('origin', 'https://shop.example.com')
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'content-type,x-api-key');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example.com');
    expect(res.headers['access-control-allow-headers']).toBe('content-type,x-api-key');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('pipelining', () => {
  const healthz = 'GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n';
  const statuses = (text: string) => text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;

  /** Sends `requests` at once on one connection; what came back when `enough` says so, or when the server closed it. */
  async function pipelined(requests: string, enough: (received: string) => boolean) {
    const served = await listenApp(h.app);
    try {
      return await new Promise<{ received: string; closedByServer: boolean }>((resolve) => {
        const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
        let received = '';
        socket.on('error', () => {});
        socket.on('data', (chunk) => {
          received += chunk.toString();
          if (!enough(received)) return;
          resolve({ received, closedByServer: false });
          socket.destroy();
        });
        socket.on('close', () => resolve({ received, closedByServer: true }));
        socket.write(requests);
      });
    } finally {
      await served.close();
    }
  }

  it(`answers up to ${MAX_UNANSWERED} pipelined requests`, async () => {
    const { received } = await pipelined(healthz.repeat(MAX_UNANSWERED), (r) => statuses(r) === MAX_UNANSWERED);
    expect(received.match(/HTTP\/1\.1 200 /g)).toHaveLength(MAX_UNANSWERED);
  });

  it(`closes a connection with more than ${MAX_UNANSWERED} requests unanswered`, async () => {
    const { received, closedByServer } = await pipelined(healthz.repeat(MAX_UNANSWERED + 1), (r) => statuses(r) > MAX_UNANSWERED);
    expect(closedByServer).toBe(true);
    expect(statuses(received)).toBeLessThanOrEqual(MAX_UNANSWERED);
  });
});
