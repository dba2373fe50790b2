// Lists feeding rules, the review queue and labels, and claims of protected
// requests, over real HTTP and the real database: a rule on a list matches
// until the entry expires; a reviewed event waits in the queue until an
// analyst labels it, and the label can put its visitor on a list in the same
// step; a requestId serves one protected request, within its age.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let customer: Customer;
let live: string;
let secret: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  customer = await signUp(h);
  live = await customer.key('live');
  secret = await customer.key('secret');
});
afterAll(async () => {
  await h.close();
});

const api = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, key = secret) => h.http()[method](path).set('authorization', `Bearer ${key}`);

let seed = 9_000;
async function identify(values = withNewToken(deviceValues(++seed)), ip = '81.2.69.142') {
  const res = await h.http().post('/v1/identify').set('x-api-key', live).set('x-forwarded-for', ip).send(identifyBody(values));
  expect(res.status).toBe(200);
  return res.body as { requestId: string; visitorId: string; ip: string };
}
const decisionOf = async (requestId: string) => (await api('get', `/v1/events/${requestId}`)).body.decision as { action: string; ruleId?: string };

describe('lists in rules', () => {
  it('a rule on a list blocks the visitor on it, until the entry expires', async () => {
    expect((await api('post', '/v1/lists').send({ name: 'blocked-visitors', kind: 'visitorId' })).status).toBe(201);
    const ruleset = await api('put', '/v1/ruleset').send({
      rules: [{ id: 'blocklist', name: 'Blocked visitors', expression: "inList('blocked-visitors', visitorId)", action: 'block' }],
    });
    expect(ruleset.status).toBe(200);
    const device = withNewToken(deviceValues(++seed));
    const first = await identify(device);
    expect((await decisionOf(first.requestId)).action).toBe('allow');
    const added = await api('post', '/v1/lists/blocked-visitors/entries').send({
      add: [{ value: first.visitorId, expiresAt: h.clock.now() + 60_000, note: 'chargeback' }],
    });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ added: 1, entries: 1 });
    const again = await identify(device);
    expect(again.visitorId).toBe(first.visitorId);
    expect(await decisionOf(again.requestId)).toMatchObject({ action: 'block', ruleId: 'blocklist' });
    h.clock.advance(61_000);
    const expired = await identify(device);
    expect((await decisionOf(expired.requestId)).action).toBe('allow');
  });

  it('an IP list matches addresses inside its CIDR ranges; bad values answer 400 with each by index and change nothing', async () => {
    expect((await api('post', '/v1/lists').send({ name: 'bad-nets', kind: 'ip' })).status).toBe(201);
    const bad = await api('post', '/v1/lists/bad-nets/entries').send({ add: [{ value: '10.0.0.0/8' }, { value: 'not-an-ip' }, { value: '300.1.1.1' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_list_entries');
    expect(bad.body.details.map((d: { path: string }) => d.path)).toEqual(['add[1].value', 'add[2].value']);
    expect((await api('get', '/v1/lists/bad-nets')).body.entries).toBe(0);
    expect((await api('post', '/v1/lists/bad-nets/entries').send({ add: [{ value: '81.2.69.0/24' }] })).status).toBe(200);
    await api('put', '/v1/ruleset').send({
      rules: [{ id: 'bad-nets', name: 'Bad networks', expression: "inList('bad-nets', ip) || cidr(ip, '2001:db8::/32')", action: 'challenge' }],
    });
    expect(await decisionOf((await identify(undefined, '81.2.69.200')).requestId)).toMatchObject({ action: 'challenge', ruleId: 'bad-nets' });
    expect((await decisionOf((await identify(undefined, '89.160.20.112')).requestId)).action).toBe('allow');
    expect((await api('post', '/v1/lists/bad-nets/entries').send({ remove: ['81.2.69.0/24'] })).body).toMatchObject({ removed: 1, entries: 0 });
    expect((await decisionOf((await identify(undefined, '81.2.69.200')).requestId)).action).toBe('allow');
  });

  it('list names are unique per project; unknown lists are 404; another account sees none of them', async () => {
    expect((await api('post', '/v1/lists').send({ name: 'bad-nets', kind: 'ip' })).status).toBe(409);
    expect((await api('get', '/v1/lists/nope')).status).toBe(404);
    const stranger = await signUp(h);
    const theirs = await stranger.key('secret');
    expect((await api('get', '/v1/lists', theirs)).body.lists).toEqual([]);
    expect((await api('get', '/v1/lists/bad-nets', theirs)).status).toBe(404);
    expect((await stranger.agent.get(`/api/projects/${customer.projectId}/lists`)).status).toBe(404);
  });
});

describe('the review queue', () => {
  it('an event a rule sends to review waits in the queue; an analyst labels it fraud and its visitor lands on a list in the same step', async () => {
    await api('post', '/v1/lists').send({ name: 'fraudsters', kind: 'visitorId' });
    await api('put', '/v1/ruleset').send({
      rules: [
        { id: 'known-fraud', name: 'Known fraud', expression: "inList('fraudsters', visitorId)", action: 'block' },
        { id: 'review-new', name: 'Review first visits', expression: 'visitCount == 1', action: 'review' },
      ],
    });
    const device = withNewToken(deviceValues(++seed));
    const event = await identify(device);
    expect((await decisionOf(event.requestId)).action).toBe('review');
    const queue = await api('get', '/v1/reviews');
    expect(queue.status).toBe(200);
    expect(queue.body.items[0]).toMatchObject({ requestId: event.requestId, visitorId: event.visitorId, ruleId: 'review-new' });
    expect(queue.body.items[0].label).toBeUndefined();

    // An analyst, through the dashboard.
    const label = await customer.agent
      .post(`/api/projects/${customer.projectId}/events/${event.requestId}/label`)
      .set('origin', customer.origin)
      .send({ verdict: 'fraud', note: 'stolen card', addTo: [{ list: 'fraudsters', field: 'visitorId' }] });
    expect(label.status).toBe(200);
    expect(label.body).toMatchObject({ verdict: 'fraud', note: 'stolen card' });
    expect((await api('get', '/v1/reviews')).body.items.map((i: { requestId: string }) => i.requestId)).not.toContain(event.requestId);
    const labeled = await api('get', '/v1/reviews?status=labeled');
    expect(labeled.body.items[0]).toMatchObject({ requestId: event.requestId, label: { verdict: 'fraud' } });
    expect((await api('get', `/v1/events/${event.requestId}`)).body.label).toMatchObject({ verdict: 'fraud', note: 'stolen card' });
    expect((await api('get', '/v1/events?label=fraud')).body.events.map((e: { requestId: string }) => e.requestId)).toEqual([event.requestId]);
    // The same device is now blocked by the list.
    expect(await decisionOf((await identify(device)).requestId)).toMatchObject({ action: 'block', ruleId: 'known-fraud' });
    // The export: one JSON line per label.
    const exported = await api('get', '/v1/labels');
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { requestId: string; label: { verdict: string } });
    expect(lines).toEqual([expect.objectContaining({ requestId: event.requestId, label: expect.objectContaining({ verdict: 'fraud' }) })]);
    const audit = await customer.agent.get(`/api/accounts/${customer.accountId}/audit?action=event.label`);
    expect(audit.body.entries[0].after).toMatchObject({ label: { verdict: 'fraud' }, addedTo: ['fraudsters'] });
  });

  it('a label on an event of a visitor merged since adds the survivor’s id, the one its device is identified as now', async () => {
    await api('post', '/v1/lists').send({ name: 'merged-fraud', kind: 'visitorId' });
    const survivor = await identify();
    const merged = await identify();
    await h.store.db.collection('visitors').updateOne({ _id: merged.visitorId as never }, { $set: { mergedInto: survivor.visitorId } });
    const res = await api('post', `/v1/events/${merged.requestId}/label`).send({ verdict: 'fraud', addTo: [{ list: 'merged-fraud', field: 'visitorId' }] });
    expect(res.status).toBe(200);
    const entries = await api('get', '/v1/lists/merged-fraud/entries');
    expect(entries.body.entries.map((e: { value: string }) => e.value)).toEqual([survivor.visitorId]);
  });

  it('a label that names a list of the wrong kind is refused (409) and nothing is labeled; an unknown event is 404', async () => {
    const event = await identify();
    const res = await api('post', `/v1/events/${event.requestId}/label`).send({ verdict: 'fraud', addTo: [{ list: 'bad-nets', field: 'visitorId' }] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'List bad-nets holds ip values, not visitorId', code: 'list_kind_mismatch' });
    expect((await api('get', `/v1/events/${event.requestId}`)).body.label).toBeUndefined();
    expect((await api('post', '/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z/label').send({ verdict: 'legitimate' })).status).toBe(404);
  });
});

describe('claims of protected requests', () => {
  it('the first claim answers the decision; a replay is 409; an old requestId is 410; another project’s is 404', async () => {
    const event = await identify();
    const first = await api('post', `/v1/events/${event.requestId}/claim`).send({});
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ requestId: event.requestId, visitorId: event.visitorId, decision: { action: 'review', ruleId: 'review-new' } });
    const replay = await api('post', `/v1/events/${event.requestId}/claim`).send({});
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual({ error: 'This requestId was already used for a protected request', code: 'request_id_used' });
    const old = await identify();
    h.clock.advance(61_000);
    const late = await api('post', `/v1/events/${old.requestId}/claim`).send({ maxAgeSeconds: 60 });
    expect(late.status).toBe(410);
    expect(late.body.code).toBe('request_id_expired');
    // Refused for its age, it was not used up: within a longer age it still serves once.
    expect((await api('post', `/v1/events/${old.requestId}/claim`).send({ maxAgeSeconds: 300 })).status).toBe(200);
    const stranger = await signUp(h);
    const fresh = await identify();
    expect((await api('post', `/v1/events/${fresh.requestId}/claim`, await stranger.key('secret')).send({})).status).toBe(404);
    expect((await api('post', `/v1/events/${fresh.requestId}/claim`, live).send({})).status).toBe(401);
  });

  it('simultaneous claims of one requestId: exactly one succeeds', async () => {
    const event = await identify();
    const answers = await Promise.all(Array.from({ length: 8 }, () => api('post', `/v1/events/${event.requestId}/claim`).send({})));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
  });
});
