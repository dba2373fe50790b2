// Prometheus metrics of one process (METRICS_PORT): what identify, the
// database driver, metering, the visitor cache and the database's queues
// record, read as Prometheus reads them, over the metrics listener.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../../server/metrics/registry.js';
import { serveMetrics } from '../../../server/metrics/server.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const TOKEN = 'metrics-token-'.padEnd(40, 'm');
let h: Harness;
let metrics: Metrics;
let started = 0;
let server: Awaited<ReturnType<typeof serveMetrics>>;

beforeAll(async () => {
  metrics = new Metrics();
  // Commands as the driver announces them, to compare with what the metrics observed.
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"monthly":3}}', VISITOR_CACHE_SIZE: '1' }, () => started++, { metrics });
  server = await serveMetrics(
    { port: 0, host: '127.0.0.1', token: TOKEN },
    () => metrics.scrape(),
    () => {},
  );
});
afterAll(async () => {
  server.close();
  await h.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The sum of a metric's samples whose labels include `labels` (undefined when there are none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(',') : [];
    if (wanted.every((w) => have.includes(w))) total = (total ?? 0) + Number(m[3]);
  }
  return total;
}

let seed = 9_000;
const identify = (key: string, values = deviceValues(++seed)) => request(h.app).post('/v1/identify').set('x-api-key', key).send(identifyBody(values));

describe('identify', () => {
  it('observes every identify once, by outcome: first visit, returning, refused (4xx)', async () => {
    h.clock.advance(1_000);
    const c = await signUp(h);
    const key = await c.key('test');
    const before = await scrape();
    const device = deviceValues(++seed);
    expect((await identify(key, device)).body.visitCount).toBe(1);
    expect((await identify(key, device)).body.visitCount).toBe(2);
    expect((await identify(key, device)).body.visitCount).toBe(3);
    expect((await request(h.app).post('/v1/identify').set('x-api-key', 'pk_test_nothing').send(identifyBody(device))).status).toBe(401);
    expect((await request(h.app).post('/v1/identify').set('x-api-key', key).send({ signals: 'no' })).status).toBe(400);
    const after = await scrape();
    const count = (text: string, outcome: string) => sample(text, 'deviceid_identify_duration_seconds_count', { outcome }) ?? 0;
    expect(count(after, 'first_visit') - count(before, 'first_visit')).toBe(1);
    expect(count(after, 'returning') - count(before, 'returning')).toBe(2);
    expect(count(after, 'refused') - count(before, 'refused')).toBe(2);
    expect(count(after, 'failed')).toBe(0);
    // Each observation is its request's time: a first visit takes longer than no time at all.
    expect(sample(after, 'deviceid_identify_duration_seconds_sum', { outcome: 'first_visit' })).toBeGreaterThan(0);
    // Other routes are not identify's.
    await request(h.app).get('/healthz');
    const total = (text: string) => sample(text, 'deviceid_identify_duration_seconds_count') ?? 0;
    expect(total(await scrape())).toBe(total(after));
  });

  it('counts a sealed answer as sealed', async () => {
    h.clock.advance(1_000);
    const c = await signUp(h);
    const key = await c.key('test');
    expect((await c.agent.post(`/api/projects/${c.projectId}/sealing/key`).set('origin', c.origin).send({})).status).toBe(201);
    const before = await scrape();
    expect((await identify(key)).body.kind).toBe('sealed');
    const after = await scrape();
    const count = (text: string, outcome: string) => sample(text, 'deviceid_identify_duration_seconds_count', { outcome }) ?? 0;
    expect(count(after, 'sealed') - count(before, 'sealed')).toBe(1);
    expect(count(after, 'first_visit')).toBe(count(before, 'first_visit'));
  });

  it('counts an identify whose client left before the answer as abandoned', async () => {
    h.clock.advance(1_000);
    const key = await (await signUp(h)).key('test');
    const count = async () =>
      (await metrics.identifyDuration.get()).values.find((v) => v.metricName?.endsWith('_count') && v.labels.outcome === 'abandoned')?.value ?? 0;
    const before = await count();
    const server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const body = JSON.stringify(identifyBody(deviceValues(++seed)));
      const req = httpRequest({
        port: (server.address() as AddressInfo).port,
        host: '127.0.0.1',
        path: '/v1/identify',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
      });
      req.on('error', () => {});
      // Gone as soon as the body is out: the answer has nowhere to go.
      req.end(body, () => req.destroy());
      for (let i = 0; i < 100 && (await count()) === before; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await count()) - before).toBe(1);
    } finally {
      server.close();
    }
  });

  it('counts the visitor cache: a returning device is a hit, a second device evicts the first (VISITOR_CACHE_SIZE=1)', async () => {
    h.clock.advance(1_000);
    const key = await (await signUp(h)).key('test');
    const [a, b] = [deviceValues(++seed), deviceValues(++seed)];
    await identify(key, a);
    const before = await scrape();
    await identify(key, a);
    const hit = await scrape();
    expect(sample(hit, 'deviceid_visitor_cache_hits_total')! - sample(before, 'deviceid_visitor_cache_hits_total')!).toBe(1);
    expect(sample(hit, 'deviceid_visitor_cache_entries')).toBe(1);
    await identify(key, b);
    const evicted = await scrape();
    expect(sample(evicted, 'deviceid_visitor_cache_evictions_total')! - sample(hit, 'deviceid_visitor_cache_evictions_total')!).toBe(1);
    // The first device is gone from the cache: its next visit reads the database.
    await identify(key, a);
    const missed = await scrape();
    expect(sample(missed, 'deviceid_visitor_cache_misses_total')!).toBeGreaterThan(sample(evicted, 'deviceid_visitor_cache_misses_total')!);
    expect(sample(missed, 'deviceid_visitor_cache_hits_total')).toBe(sample(evicted, 'deviceid_visitor_cache_hits_total'));
  });
});

describe('refusals', () => {
  it('counts the per-second limit and the monthly quota apart, once per refused call', async () => {
    h.clock.advance(1_000);
    const c = await signUp(h);
    const [test, live] = [await c.key('test'), await c.key('live')];
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await identify(test)).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    h.clock.advance(1_000);
    for (let i = 0; i < 4; i++) statuses.push((await identify(live)).status);
    expect(statuses.slice(12)).toEqual([200, 200, 200, 429]);
    const after = await scrape();
    const refused = (text: string, reason: string) => sample(text, 'deviceid_refusals_total', { reason }) ?? 0;
    expect(refused(after, 'rate_limit') - refused(before, 'rate_limit')).toBe(2);
    expect(refused(after, 'monthly_quota') - refused(before, 'monthly_quota')).toBe(1);
    expect(refused(after, 'body_budget')).toBe(0);
  });
});

describe('rules', () => {
  it("counts a project's decisions by action, those a rule made, and none for a project without a ruleset", async () => {
    h.clock.advance(1_000);
    const c = await signUp(h);
    const [key, secret] = [await c.key('test'), await c.key('secret')];
    const total = async (name: string, labels: Record<string, string> = {}) => sample(await scrape(), name, labels) ?? 0;
    const before = {
      review: await total('deviceid_rule_decisions_total', { action: 'review' }),
      all: await total('deviceid_rule_decisions_total'),
      hits: await total('deviceid_rule_hits_total'),
    };
    await identify(key);
    expect(await total('deviceid_rule_decisions_total')).toBe(before.all);
    const put = await request(h.app)
      .put('/v1/ruleset')
      .set('authorization', `Bearer ${secret}`)
      .send({ rules: [{ name: 'second visits', expression: 'visitCount > 1', action: 'review' }], baseVersion: 0 });
    expect(put.status).toBe(200);
    const device = deviceValues(++seed);
    await identify(key, device);
    await identify(key, device);
    expect(await total('deviceid_rule_decisions_total', { action: 'allow' })).toBeGreaterThanOrEqual(1);
    expect((await total('deviceid_rule_decisions_total')) - before.all).toBe(2);
    expect((await total('deviceid_rule_decisions_total', { action: 'review' })) - before.review).toBe(1);
    expect((await total('deviceid_rule_hits_total')) - before.hits).toBe(1);
    expect(await total('deviceid_rule_errors_total')).toBe(0);
  });
});

describe('database', () => {
  it('observes every command the driver sent, by command name', async () => {
    h.clock.advance(1_000);
    await identify(await (await signUp(h)).key('test'));
    // Read from the registry: a scrape's own reads of the database (the queue figures) would be in flight.
    const counts = (await metrics.dbCommands.get()).values.filter((v) => v.metricName === 'deviceid_db_command_duration_seconds_count');
    expect(counts.reduce((sum, v) => sum + v.value, 0)).toBe(started);
    expect(counts.find((v) => v.labels.command === 'insert' && v.labels.outcome === 'ok')?.value).toBeGreaterThan(0);
  });

  it('reports the webhook queue, its oldest due attempt and pending deletion jobs as the database holds them', async () => {
    const empty = await scrape();
    expect(sample(empty, 'deviceid_webhook_queue_entries')).toBe(0);
    expect(sample(empty, 'deviceid_webhook_oldest_due_seconds')).toBe(0);
    const now = h.clock.now();
    await h.store.webhooks.enqueue(now - 5_000, 'whe_x|req_a');
    await h.store.webhooks.enqueue(now + 60_000, 'whe_x|req_b');
    await h.store.deletions.claim({ _id: 'acc_m|vis_m', id: 'del_m', accountId: 'acc_m', visitorId: 'vis_m', status: 'queued', createdAt: new Date(now) });
    await h.store.deletions.claim({ _id: 'acc_m|vis_n', id: 'del_n', accountId: 'acc_m', visitorId: 'vis_n', status: 'done', createdAt: new Date(now) });
    const text = await scrape();
    expect(sample(text, 'deviceid_webhook_queue_entries')).toBe(2);
    expect(sample(text, 'deviceid_webhook_oldest_due_seconds')).toBe(5);
    expect(sample(text, 'deviceid_deletion_jobs_pending')).toBe(1);
  });
});

describe('the metrics listener', () => {
  const url = () => `http://127.0.0.1:${server.port}`;

  it('answers only a scrape with the bearer token', async () => {
    expect((await fetch(`${url()}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${url()}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect([wrong.status, wrong.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="metrics"']);
    expect((await fetch(`${url()}/metrics`, { headers: { authorization: TOKEN } })).status).toBe(401);
    const ok = await fetch(`${url()}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } });
    expect([ok.status, ok.headers.get('content-type')]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
    expect(await ok.text()).toContain('# TYPE deviceid_identify_duration_seconds histogram');
  });

  it('serves /metrics only, to GET and HEAD', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await fetch(`${url()}/`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${url()}/metrics/x`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${url()}/metrics?x=1`, { headers: auth })).status).toBe(200);
    const post = await fetch(`${url()}/metrics`, { method: 'POST', headers: auth });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const head = await fetch(`${url()}/metrics`, { method: 'HEAD', headers: auth });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('answers 500 when the figures cannot be gathered, and reports why', async () => {
    const errors: unknown[] = [];
    const failing = await serveMetrics(
      { port: 0, host: '127.0.0.1', token: null },
      () => Promise.reject(new Error('gone')),
      (e) => errors.push(e),
    );
    try {
      expect((await fetch(`http://127.0.0.1:${failing.port}/metrics`)).status).toBe(500);
      expect(errors).toHaveLength(1);
    } finally {
      failing.close();
    }
  });
});
