// The body budget: bodies count once read, until their response is done;
// past the budget a request gets 503 with Retry-After and the service's
// error body, and is served again once the budget is free; a connection
// that goes gives back what its requests held, pipelined ones included.
// Over real HTTP, on an Express app with the service's error handler, and
// on the real app with BODY_BUDGET_BYTES.
import { connect } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyBudget } from '../../../server/http/bodyBudget.js';
import { errorHandler } from '../../../server/http/errors.js';
import { httpMetrics } from '../../../server/metrics/http.js';
import { Metrics } from '../../../server/metrics/registry.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

describe('BodyBudget', () => {
  const budget = new BodyBudget(250);
  const metrics = new Metrics();
  let open = () => {};
  let gate = Promise.resolve();
  let served: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(httpMetrics(metrics));
    app.use(express.json({ verify: budget.verify }));
    // Handling that takes until the test opens the gate.
    app.post('/slow', (_req, res, next) => void gate.then(() => res.json({ ok: true }), next));
    app.use(errorHandler);
    served = await listenApp(app);
  });
  afterAll(() => served.close());

  const post = (bytes: number) =>
    fetch(`${served.url}/slow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(bytes - 10) }) });
  const until = async (pred: () => boolean) => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(pred(), `bytes ${budget.bytes}`).toBe(true);
  };

  it('holds a body from its reading to its response; beyond the budget answers 503 with Retry-After; serves again once free', async () => {
    gate = new Promise((r) => (open = r));
    const first = post(100);
    const second = post(100);
    await until(() => budget.bytes === 200);
    const refused = await post(100);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ error: 'Service temporarily unavailable; retry later', code: 'service_unavailable' });
    // Counted as a refusal for the body budget (the metrics).
    expect((await metrics.refusals.get()).values).toEqual([{ labels: { reason: 'body_budget' }, value: 1 }]);
    // What still fits is served.
    const small = post(50);
    await until(() => budget.bytes === 250);
    open();
    expect((await Promise.all([first, second, small])).map((r) => r.status)).toEqual([200, 200, 200]);
    await until(() => budget.bytes === 0);
    // With nothing held a body is taken whatever its size: a budget below the largest body serves them one at a time.
    expect((await post(300)).status).toBe(200);
  });

  it('gives back what a client that went away held', async () => {
    gate = new Promise((r) => (open = r));
    const aborted = new AbortController();
    const gone = fetch(`${served.url}/slow`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"pad":"' + 'x'.repeat(190) + '"}',
      signal: aborted.signal,
    });
    await until(() => budget.bytes === 200);
    aborted.abort();
    await expect(gone).rejects.toThrow();
    await until(() => budget.bytes === 0);
    open();
  });

  it('gives back what a pipelined request queued behind an unfinished one held when its connection goes', async () => {
    gate = new Promise((r) => (open = r));
    const body = '{"pad":"' + 'x'.repeat(90) + '"}';
    const request = `POST /slow HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    socket.on('error', () => {});
    socket.write(request + request);
    // Both read and held: the second's response waits in Node's queue behind the first's.
    await until(() => budget.bytes === 200);
    socket.destroy();
    await until(() => budget.bytes === 0);
    open();
  });
});

describe('BODY_BUDGET_BYTES on the app', () => {
  let tight: Harness;
  let live: string;
  beforeAll(async () => {
    tight = await createHarness(import.meta.filename, { BODY_BUDGET_BYTES: '1000', PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
    live = await (await signUp(tight)).key('live');
  });
  afterAll(() => tight.close());

  it('answers 503 to identify bodies beyond the budget while one is held; requests without a body are served', async () => {
    // 20 at once, each ~5 KB against 1,000 bytes: the one taken holds the budget while it is identified.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        tight
          .http()
          .post('/v1/identify')
          .set('x-api-key', live)
          .send(identifyBody(deviceValues(i + 1))),
      ),
    );
    expect([...new Set(answers.map((r) => r.status))].sort()).toEqual([200, 503]);
    const refused = answers.find((r) => r.status === 503)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({ error: 'Service temporarily unavailable; retry later', code: 'service_unavailable' });
    expect((await tight.http().get('/healthz')).status).toBe(200);
  });

  it("survives the audit's attack: 300 pipelined requests and a 256 KB body on a connection that reads nothing", async () => {
    const served = await listenApp(tight.app);
    try {
      const pad = '{"pad":"' + 'p'.repeat(256 * 1024 - 10) + '"}';
      const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
      socket.on('error', () => {});
      socket.pause();
      socket.write(
        'GET /agent.js HTTP/1.1\r\nhost: localhost\r\n\r\n'.repeat(300) +
          `POST /nothing-here HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${pad.length}\r\n\r\n${pad}`,
      );
      // The audit's second before giving up, unless the server closes the connection first.
      await new Promise((resolve) => {
        socket.once('close', resolve);
        setTimeout(resolve, 1_000);
      });
      socket.destroy();
      // With 1,000 bytes of budget a 5 KB body is taken only while nothing is held: one leaked body and this is 503.
      const res = await tight
        .http()
        .post('/v1/identify')
        .set('x-api-key', live)
        .send(identifyBody(deviceValues(100)));
      expect(res.status).toBe(200);
    } finally {
      await served.close();
    }
  });
});
