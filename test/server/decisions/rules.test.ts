// Rules over real HTTP and the real database: saved as versions (every
// expression checked first, 400 with its position), judged on every
// identify, carried by the full event, search, sealed results and webhooks,
// never by the plain answer a page reads; in force at once in another
// process; test-mode rules record without acting.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unseal } from '../../../clients/node/sealing.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let customer: Customer;
let live: string;
let secret: string;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', WEBHOOKS_ALLOW_PRIVATE: 'true' });
  customer = await signUp(h);
  live = await customer.key('live');
  secret = await customer.key('secret');
});
afterAll(async () => {
  await h.close();
});

const bearer = (k: string) => `Bearer ${k}`;
const putRuleset = (body: object, key = secret) => h.http().put('/v1/ruleset').set('authorization', bearer(key)).send(body);
const getEvent = (requestId: string) => h.http().get(`/v1/events/${requestId}`).set('authorization', bearer(secret));

let seed = 5_000;
/** A human's first visit, or a headless bot's. */
function visit(kind: 'human' | 'bot', extra: Record<string, unknown> = {}) {
  const v = withNewToken(deviceValues(++seed));
  if (kind === 'bot') {
    v.automation = { ...v.automation, webdriver: true, headlessUserAgent: true };
    v.userAgent = { ...v.userAgent, userAgent: v.userAgent.userAgent.replace('Chrome/', 'HeadlessChrome/') };
  }
  return identifyBody(v, extra);
}

async function identify(kind: 'human' | 'bot', app = h) {
  const res = await app.http().post('/v1/identify').set('x-api-key', live).send(visit(kind));
  expect(res.status).toBe(200);
  return res.body as { requestId: string; kind: string; decision?: unknown; sealedResult?: string };
}

const blockBots = {
  id: 'block-bots',
  name: 'Block bad bots',
  expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'",
  action: 'block',
  response: { status: 403, headers: { 'content-type': 'application/json' }, body: '{"error":"no bots"}' },
};

describe('the ruleset', () => {
  it('starts empty at version 0: everything allowed, and every event says so', async () => {
    const r = await h.http().get('/v1/ruleset').set('authorization', bearer(secret));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: 0, rules: [], defaultAction: 'allow', updatedAt: null, updatedBy: null });
    const { requestId } = await identify('bot');
    expect((await getEvent(requestId)).body.decision).toEqual({ action: 'allow', rulesetVersion: 0, testMatches: [] });
  });

  it('refuses an expression that does not compile with 400 invalid_rules, its rule, line and column; nothing changes', async () => {
    const res = await putRuleset({
      rules: [
        { name: 'ok', expression: 'suspectScore > 50', action: 'review' },
        { name: 'bad', expression: "suspectScore > 50 &&\n  ipLocation.country > 'x' + 1", action: 'block' },
        { name: 'unknown field', expression: 'nosuchfield == 1', action: 'block' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_rules');
    expect(res.body.error).toMatch(/^rules\[1\]\.expression: .+ \(line 2, column \d+\) \(and 1 more\)$/);
    expect(res.body.details).toHaveLength(2);
    expect(res.body.details[0]).toMatchObject({ path: 'rules[1].expression', line: 2 });
    expect(res.body.details[1]).toMatchObject({ path: 'rules[2].expression', line: 1 });
    expect(typeof res.body.details[1].message).toBe('string');
    expect((await h.http().get('/v1/ruleset').set('authorization', bearer(secret))).body.version).toBe(0);
  });

  it('refuses a non-boolean expression, a response on a non-block rule, duplicate ids and a bad block response (400)', async () => {
    const bad = [
      { rules: [{ name: 'n', expression: 'suspectScore + 1', action: 'block' }] },
      { rules: [{ name: 'n', expression: 'true', action: 'review', response: { status: 403 } }] },
      {
        rules: [
          { id: 'x', name: 'a', expression: 'true', action: 'allow' },
          { id: 'x', name: 'b', expression: 'true', action: 'allow' },
        ],
      },
      { rules: [{ name: 'n', expression: 'true', action: 'block', response: { status: 500 } }] },
      { rules: [{ name: 'n', expression: 'true', action: 'block', response: { status: 403, headers: { 'set-cookie': 'a=b' } } }] },
      { rules: [{ name: 'n', expression: 'true', action: 'block', response: { status: 403, headers: { 'x-a': 'a\r\nb: c' } } }] },
      { rules: [{ name: 'n', expression: 'true', action: 'deny' }] },
    ];
    for (const body of bad) {
      const res = await putRuleset(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('saves a version; the next identify is judged by it: a bad bot is blocked with the rule’s response, a human allowed', async () => {
    const res = await putRuleset({ rules: [blockBots], baseVersion: 0 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 1, defaultAction: 'allow', rules: [{ ...blockBots, enabled: true, mode: 'live' }] });
    expect(res.body.updatedBy).toMatch(/secret|key/i);
    const bot = await identify('bot');
    // The page's answer never carries the decision.
    expect(bot.decision).toBeUndefined();
    expect((await getEvent(bot.requestId)).body.decision).toEqual({
      action: 'block',
      ruleId: 'block-bots',
      rulesetVersion: 1,
      response: blockBots.response,
      testMatches: [],
    });
    const human = await identify('human');
    expect((await getEvent(human.requestId)).body.decision).toEqual({ action: 'allow', rulesetVersion: 1, testMatches: [] });
  });

  it('answers 409 ruleset_conflict to a change made on an old version, and keeps every version readable', async () => {
    const stale = await putRuleset({ rules: [], baseVersion: 0 });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: 'The ruleset changed since the version given: read it again', code: 'ruleset_conflict' });
    const v1 = await h.http().get('/v1/ruleset/versions/1').set('authorization', bearer(secret));
    expect(v1.status).toBe(200);
    expect(v1.body.rules[0].id).toBe('block-bots');
    const missing = await h.http().get('/v1/ruleset/versions/99').set('authorization', bearer(secret));
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('ruleset_version_not_found');
  });

  it('a test-mode rule records “would have matched” and changes nothing; the first live match decides; a rule without id gets one', async () => {
    const res = await putRuleset({
      rules: [
        { id: 'watch-all', name: 'Everything (test)', expression: 'true', action: 'block', mode: 'test' },
        { id: 'disabled', name: 'Disabled', expression: 'true', action: 'block', enabled: false },
        { id: 'review-bots', name: 'Review bots', expression: 'verdicts.bot.result', action: 'review' },
        blockBots,
        { name: 'Challenge new', expression: 'visitCount == 1', action: 'challenge' },
      ],
      defaultAction: 'allow',
    });
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(2);
    expect(res.body.rules[4].id).toMatch(/^rul_[0-9A-Z]{26}$/);
    const bot = await identify('bot');
    expect((await getEvent(bot.requestId)).body.decision).toEqual({
      action: 'review',
      ruleId: 'review-bots',
      rulesetVersion: 2,
      testMatches: ['watch-all'],
    });
    const human = await identify('human');
    expect((await getEvent(human.requestId)).body.decision).toMatchObject({ action: 'challenge', ruleId: res.body.rules[4].id, testMatches: ['watch-all'] });
  });

  it('search finds events by action, by deciding rule and by test rule; the stats count hits per rule', async () => {
    const search = (q: string) => h.http().get(`/v1/events?${q}&limit=100`).set('authorization', bearer(secret));
    const reviewed = await search('decision=review');
    expect(reviewed.status).toBe(200);
    expect(reviewed.body.events.length).toBeGreaterThan(0);
    expect(reviewed.body.events.every((e: { decision: { action: string } }) => e.decision.action === 'review')).toBe(true);
    const blocked = await search('rule=block-bots');
    expect(blocked.body.events.map((e: { decision: { ruleId: string } }) => e.decision.ruleId)).toEqual(['block-bots']);
    const watched = await search('testRule=watch-all');
    expect(watched.body.events).toHaveLength(2);
    expect((await search('decision=deny')).status).toBe(400);
    // Allowed by a ruleset or by none in force (version 0, stored without a decision); nothing is labeled yet.
    type Found = { decision: { action: string; rulesetVersion: number } };
    const allowed: Found[] = (await search('decision=allow')).body.events;
    expect(allowed.map((e) => e.decision.action)).toEqual(allowed.map(() => 'allow'));
    expect(new Set(allowed.map((e) => e.decision.rulesetVersion > 0))).toEqual(new Set([true, false]));
    expect((await search('label=none')).body.events).toHaveLength((await search('')).body.events.length);
    expect((await search('label=fraud')).body.events).toEqual([]);
    const stats = await h.http().get('/v1/ruleset/stats').set('authorization', bearer(secret));
    expect(stats.status).toBe(200);
    expect(stats.body.rulesetVersion).toBe(2);
    const hits = Object.fromEntries(stats.body.rules.map((r: { ruleId: string; hits24h: number }) => [r.ruleId, r.hits24h]));
    expect(hits).toMatchObject({ 'watch-all': 2, 'review-bots': 1, 'block-bots': 1, disabled: 0 });
    h.clock.advance(25 * 3600_000);
    const later = await h.http().get('/v1/ruleset/stats').set('authorization', bearer(secret));
    expect(later.body.rules.find((r: { ruleId: string }) => r.ruleId === 'block-bots')).toEqual({ ruleId: 'block-bots', hits24h: 0, hits7d: 1, errors24h: 0 });
  });

  it('previews a draft on recent events: matches, a sample, and 400 invalid_rules with its position for a draft that does not compile', async () => {
    const preview = (body: object) => h.http().post('/v1/ruleset/preview').set('authorization', bearer(secret)).send(body);
    const bots = await preview({ expression: "verdicts.bot.kind == 'bad'" });
    expect(bots.status).toBe(200);
    const all = await preview({ expression: 'true' });
    expect(all.body.matched).toBe(all.body.examined);
    expect(all.body.examined).toBeGreaterThanOrEqual(bots.body.examined);
    expect(bots.body.matched).toBeGreaterThan(0);
    expect(bots.body.matched).toBeLessThan(all.body.matched);
    expect(bots.body.sample).toHaveLength(bots.body.matched);
    expect(bots.body.sample[0].requestId).toMatch(/^req_/);
    // `events` bounds how many of the newest are examined; `days` how far back.
    expect((await preview({ expression: 'true', events: 2 })).body).toMatchObject({ examined: 2, matched: 2 });
    h.clock.advance(8 * 24 * 3600_000);
    expect((await preview({ expression: 'true', days: 7 })).body).toMatchObject({ examined: 0, matched: 0 });
    const bad = await preview({ expression: 'suspectScore >' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_rules', details: [{ path: 'expression', line: 1 }] });
    expect((await preview({ expression: 'true', events: 10_001 })).status).toBe(400);
    expect((await preview({ expression: 'true', days: 8 })).status).toBe(400);
  });

  it('a change made in one process is in force on the next identify in another', async () => {
    const other = await h.otherProcess();
    // The other process has the project and ruleset cached.
    await identify('human', { ...h, http: other.http });
    const res = await putRuleset({ rules: [{ id: 'block-all', name: 'Block all', expression: 'true', action: 'block' }] });
    expect(res.status).toBe(200);
    const { requestId } = await identify('human', { ...h, http: other.http });
    expect((await getEvent(requestId)).body.decision).toMatchObject({ action: 'block', ruleId: 'block-all', rulesetVersion: res.body.version });
  });

  it('a sealed result carries the decision for the site’s server; the page sees only the sealed blob', async () => {
    const key = (await customer.agent.post(`/api/projects/${customer.projectId}/sealing/key`).set('origin', customer.origin).send({})).body.key as string;
    const answer = await identify('human');
    expect(answer.kind).toBe('sealed');
    const opened = unseal(answer.sealedResult!, key, { now: h.clock.now() }) as { decision?: { action: string; ruleId: string } };
    expect(opened.decision).toMatchObject({ action: 'block', ruleId: 'block-all' });
    await customer.agent.delete(`/api/projects/${customer.projectId}/sealing`).set('origin', customer.origin);
  });

  it('a webhook delivers the event with its decision, and again with its label once an analyst labels it', async () => {
    const received: unknown[] = [];
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const created = await customer.agent
        .post(`/api/projects/${customer.projectId}/webhooks`)
        .set('origin', customer.origin)
        .send({ url: `http://127.0.0.1:${port}/hook` });
      expect(created.status).toBe(201);
      const { requestId } = await identify('bot');
      for (let i = 0; i < 100 && !received.some((e) => (e as { requestId: string }).requestId === requestId); i++) await new Promise((r) => setTimeout(r, 50));
      const delivered = received.find((e) => (e as { requestId: string }).requestId === requestId) as { decision: unknown; label?: unknown };
      expect(delivered.decision).toMatchObject({ action: 'block', ruleId: 'block-all' });
      expect(delivered.label).toBeUndefined();
      const labeled = await h.http().post(`/v1/events/${requestId}/label`).set('authorization', bearer(secret)).send({ verdict: 'fraud', note: 'bot farm' });
      expect(labeled.status).toBe(200);
      const again = () => received.find((e) => (e as { requestId: string; label?: unknown }).requestId === requestId && (e as { label?: unknown }).label);
      for (let i = 0; i < 100 && !again(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(again()).toMatchObject({ requestId, decision: { action: 'block' }, label: { verdict: 'fraud', note: 'bot farm' } });
    } finally {
      server.close();
    }
  });

  it('another account never sees this project’s rules or decisions', async () => {
    const stranger = await signUp(h);
    const theirSecret = await stranger.key('secret');
    const theirs = await h.http().get('/v1/ruleset').set('authorization', bearer(theirSecret));
    expect(theirs.body).toMatchObject({ version: 0, rules: [] });
    const mine = await h.http().get(`/api/projects/${customer.projectId}/ruleset`).set('cookie', '');
    expect(mine.status).toBe(401);
    const cross = await stranger.agent.get(`/api/projects/${customer.projectId}/ruleset`);
    expect(cross.status).toBe(404);
    const put = await stranger.agent.put(`/api/projects/${customer.projectId}/ruleset`).set('origin', stranger.origin).send({ rules: [] });
    expect(put.status).toBe(404);
    expect((await stranger.agent.get(`/api/projects/${stranger.projectId}/ruleset`)).body.version).toBe(0);
  });

  it('the dashboard routes work with the session: read, save with the audit log’s before and after', async () => {
    const current = await customer.agent.get(`/api/projects/${customer.projectId}/ruleset`);
    expect(current.status).toBe(200);
    const saved = await customer.agent
      .put(`/api/projects/${customer.projectId}/ruleset`)
      .set('origin', customer.origin)
      .send({ rules: [], defaultAction: 'review', baseVersion: current.body.version });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ version: current.body.version + 1, rules: [], defaultAction: 'review' });
    const audit = await customer.agent.get(`/api/accounts/${customer.accountId}/audit?action=ruleset.update`);
    expect(audit.status).toBe(200);
    const latest = audit.body.entries[0];
    expect(latest.before.version).toBe(current.body.version);
    expect(latest.after).toMatchObject({ version: current.body.version + 1, defaultAction: 'review', rules: [] });
    // Nothing matches: the default action decides.
    const { requestId } = await identify('human');
    expect((await getEvent(requestId)).body.decision).toEqual({ action: 'review', rulesetVersion: saved.body.version, testMatches: [] });
  });
});
