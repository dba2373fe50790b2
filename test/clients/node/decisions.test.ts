// The decision routes of deviceid/client against the real service on a real
// port (every body checked against the contract's schemas): the ruleset and
// its versions, previews and stats; lists, their entries page by page and
// their deletion; the review queue, labels and their export; claims, with
// typed errors for a replay (409), an old requestId (410) and an unknown one.
// Then, against scripted servers, what is retried: a preview and a deletion
// are, a claim never once it may have reached the service.
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  ConflictError,
  createServerClient,
  GoneError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  type Claim,
  type LabelExportLine,
  type ListEntry,
  type Ruleset,
  type ServerClient,
} from '../../../clients/node/index.js';
import type { ClaimSchema, ListEntrySchema, RulesetSchema } from '../../../contract/decisions.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { json, listenApp, scripted, type Listening, type Script } from '../../support/httpServer.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

let h: Harness;
let srv: Listening;
let c: Customer;
let live: string;
let server: ServerClient;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  srv = await listenApp(h.app);
  c = await signUp(h);
  live = await c.key('live');
  server = createServerClient({ baseUrl: srv.url, secretKey: await c.key('secret'), validateResponses: true });
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

let seed = 12_000;
/** A human's first visit, or a headless bot's. */
async function identify(kind: 'human' | 'bot' = 'human') {
  const v = withNewToken(deviceValues(++seed));
  if (kind === 'bot') {
    v.automation = { ...v.automation, webdriver: true, headlessUserAgent: true };
    v.userAgent = { ...v.userAgent, userAgent: v.userAgent.userAgent.replace('Chrome/', 'HeadlessChrome/') };
  }
  const res = await h.http().post('/v1/identify').set('x-api-key', live).send(identifyBody(v));
  expect(res.status).toBe(200);
  return res.body as { requestId: string; visitorId: string };
}

const blockBots = {
  id: 'block-bots',
  name: 'Block bad bots',
  expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'",
  action: 'block' as const,
  response: { status: 403, headers: { 'content-type': 'application/json' }, body: '{"error":"no bots"}' },
};

describe('types come from the contract', () => {
  it('infers rulesets, entries and claims from the contract schemas', () => {
    expectTypeOf<Ruleset>().toEqualTypeOf<z.infer<typeof RulesetSchema>>();
    expectTypeOf<ListEntry>().toEqualTypeOf<z.infer<typeof ListEntrySchema>>();
    expectTypeOf<Claim>().toEqualTypeOf<z.infer<typeof ClaimSchema>>();
    expectTypeOf(server.claimEvent).returns.resolves.toEqualTypeOf<Claim>();
    expectTypeOf(server.exportLabels).returns.resolves.toEqualTypeOf<LabelExportLine[]>();
  });
});

describe('the ruleset', () => {
  it('reads version 0, saves a version, refuses a bad expression (ValidationError) and a stale base (ConflictError), reads past versions', async () => {
    expect(await server.getRuleset()).toEqual({ version: 0, rules: [], defaultAction: 'allow', updatedAt: null, updatedBy: null });
    const saved = await server.putRuleset({ rules: [blockBots], baseVersion: 0 });
    expect(saved).toMatchObject({ version: 1, defaultAction: 'allow', rules: [{ ...blockBots, enabled: true, mode: 'live' }] });

    const bad = await caught(server.putRuleset({ rules: [{ name: 'bad', expression: 'nosuchfield == 1', action: 'block' }] }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad).toMatchObject({ status: 400, serverCode: 'invalid_rules', body: { details: [{ path: 'rules[0].expression', line: 1 }] } });

    const stale = await caught(server.putRuleset({ rules: [], baseVersion: 0 }));
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale).toMatchObject({ status: 409, code: 'conflict', serverCode: 'ruleset_conflict' });

    expect((await server.getRulesetVersion(1)).rules.map((r) => r.id)).toEqual(['block-bots']);
    expect(await caught(server.getRulesetVersion(99))).toMatchObject({ status: 404, serverCode: 'ruleset_version_not_found' });
    await expect(server.getRulesetVersion(0)).rejects.toThrow(TypeError);
  });

  it('previews a draft on recent events and counts the rule’s hits', async () => {
    const bot = await identify('bot');
    await identify('human');
    const preview = await server.previewRule({ expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'", days: 1 });
    expect(preview.examined).toBeGreaterThanOrEqual(2);
    expect(preview.sample.map((s) => s.requestId)).toContain(bot.requestId);
    expect(await caught(server.previewRule({ expression: 'suspectScore +' }))).toBeInstanceOf(ValidationError);
    const stats = await server.getRuleStats();
    expect(stats.rulesetVersion).toBe(1);
    expect(stats.rules).toEqual([expect.objectContaining({ ruleId: 'block-bots' })]);
    expect(stats.rules[0]!.hits24h).toBeGreaterThanOrEqual(1);
  });
});

describe('lists', () => {
  it('creates, reads, describes, fills and pages through a list, then deletes it', async () => {
    const created = await server.createList({ name: 'blocked-ips', kind: 'ip' });
    expect(created).toMatchObject({ name: 'blocked-ips', kind: 'ip', description: '', entries: 0 });
    expect(await caught(server.createList({ name: 'blocked-ips', kind: 'ip' }))).toMatchObject({ status: 409, serverCode: 'list_exists' });
    expect((await server.updateList('blocked-ips', { description: 'chargebacks' })).description).toBe('chargebacks');
    expect((await server.listLists()).map((l) => l.name)).toEqual(['blocked-ips']);

    const values = Array.from({ length: 250 }, (_, i) => `10.1.${Math.floor(i / 100)}.${i % 100}`);
    const changed = await server.changeListEntries('blocked-ips', { add: values.map((value) => ({ value, note: 'bulk' })) });
    expect(changed).toEqual({ added: 250, updated: 0, removed: 0, entries: 250 });
    const refused = await caught(server.changeListEntries('blocked-ips', { add: [{ value: 'not-an-ip' }] }));
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ serverCode: 'invalid_list_entries' });

    const page = await server.getListEntries('blocked-ips', { limit: 100 });
    expect(page.entries).toHaveLength(100);
    expect(page.cursor).toEqual(expect.any(String));
    const pages = [];
    for await (const p of server.listEntryPages('blocked-ips', { limit: 100 })) pages.push(p.entries.length);
    expect(pages).toEqual([100, 100, 50]);
    const all: string[] = [];
    for await (const e of server.allListEntries('blocked-ips', { limit: 100 })) all.push(e.value);
    expect(all).toHaveLength(250);
    expect(new Set(all)).toEqual(new Set(values));
    expect([...all].sort()).toEqual(all);
    const two = [];
    for await (const p of server.listEntryPages('blocked-ips', { limit: 100, maxPages: 2 })) two.push(p);
    expect(two).toHaveLength(2);
    const prefixed = [];
    for await (const e of server.allListEntries('blocked-ips', { prefix: '10.1.2.' })) prefixed.push(e.value);
    expect(prefixed).toHaveLength(50);

    expect(await server.changeListEntries('blocked-ips', { remove: ['10.1.0.0', '10.9.9.9'] })).toMatchObject({ removed: 1, entries: 249 });
    expect(await server.deleteList('blocked-ips')).toMatchObject({ name: 'blocked-ips', kind: 'ip', entries: 249 });
    expect(await caught(server.getList('blocked-ips'))).toBeInstanceOf(NotFoundError);
    // Deleting a list that is not there: NotFoundError (on a first attempt).
    expect(await caught(server.deleteList('blocked-ips'))).toBeInstanceOf(NotFoundError);
    await expect(server.getList('')).rejects.toThrow(TypeError);
  });
});

describe('reviews and labels', () => {
  it('pages through the queue, labels an event onto a list, and exports the labels as parsed lines or raw JSON lines', async () => {
    await server.createList({ name: 'fraudsters', kind: 'visitorId' });
    const current = await server.getRuleset();
    await server.putRuleset({
      rules: [
        ...current.rules,
        { id: 'known-fraud', name: 'Known fraud', expression: "inList('fraudsters', visitorId)", action: 'block' },
        { id: 'review-new', name: 'Review first visits', expression: 'visitCount == 1', action: 'review' },
      ],
      baseVersion: current.version,
    });
    const since = h.clock.now();
    const events = [];
    for (let i = 0; i < 5; i++) {
      events.push(await identify());
      h.clock.advance(1000);
    }
    const first = await server.listReviews({ limit: 2 });
    expect(first.items.map((i) => i.requestId)).toEqual([events[4]!.requestId, events[3]!.requestId]);
    expect(first.paginationKey).toEqual(expect.any(String));
    const pages = [];
    for await (const p of server.reviewPages({ limit: 2 })) pages.push(p.items.length);
    expect(pages.slice(0, 2)).toEqual([2, 2]);
    const all: string[] = [];
    for await (const item of server.allReviews({ limit: 2 })) all.push(item.requestId);
    expect(all.slice(0, 5)).toEqual(events.map((e) => e.requestId).reverse());

    // Nothing labeled yet: an empty export.
    expect(await server.exportLabels()).toEqual([]);
    expect(await server.exportLabelsText()).toBe('');

    const label = await server.labelEvent(events[0]!.requestId, { verdict: 'fraud', note: 'stolen card', addTo: [{ list: 'fraudsters', field: 'visitorId' }] });
    expect(label).toMatchObject({ verdict: 'fraud', note: 'stolen card', labeledBy: expect.stringMatching(/secret/i) });
    expect(await caught(server.labelEvent(events[1]!.requestId, { verdict: 'fraud', addTo: [{ list: 'nope', field: 'ip' }] }))).toBeInstanceOf(NotFoundError);
    expect((await server.getList('fraudsters')).entries).toBe(1);
    expect((await server.listReviews({ status: 'labeled' })).items).toEqual([expect.objectContaining({ requestId: events[0]!.requestId, label })]);

    // One label: one line, parsed as such (not mistaken for a JSON document).
    const one = await server.exportLabels({ since: new Date(since) });
    expect(one).toEqual([
      expect.objectContaining({
        requestId: events[0]!.requestId,
        visitorId: events[0]!.visitorId,
        label,
        decision: expect.objectContaining({ action: 'review' }),
      }),
    ]);
    await server.labelEvent(events[1]!.requestId, { verdict: 'legitimate' });
    const text = await server.exportLabelsText();
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trim().split('\n')).toHaveLength(2);
    expect((await server.exportLabels()).map((l) => l.label.verdict).sort()).toEqual(['fraud', 'legitimate']);
    expect(await server.exportLabels({ since: h.clock.now() + 1 })).toEqual([]);
  });
});

describe('claims', () => {
  it('the first claim answers the decision; a replay is ConflictError, an old requestId GoneError, an unknown one NotFoundError', async () => {
    const bot = await identify('bot');
    const claim = await server.claimEvent(bot.requestId);
    expect(claim).toMatchObject({
      requestId: bot.requestId,
      visitorId: bot.visitorId,
      decision: { action: 'block', ruleId: 'block-bots', response: blockBots.response },
    });
    const replay = await caught(server.claimEvent(bot.requestId));
    expect(replay).toBeInstanceOf(ConflictError);
    expect(replay).toMatchObject({ status: 409, serverCode: 'request_id_used', attempts: 1 });

    const old = await identify();
    h.clock.advance(61_000);
    const late = await caught(server.claimEvent(old.requestId, { maxAgeSeconds: 60 }));
    expect(late).toBeInstanceOf(GoneError);
    expect(late).toMatchObject({ status: 410, code: 'gone', serverCode: 'request_id_expired' });
    expect((await server.claimEvent(old.requestId)).decision.action).toBe('review');

    expect(await caught(server.claimEvent('req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'))).toMatchObject({ status: 404, serverCode: 'event_not_found' });
    await expect(server.claimEvent(old.requestId, { maxAgeSeconds: 0 })).rejects.toThrow(TypeError);
  });
});

describe('retries of the decision routes (scripted servers)', () => {
  const SECRET = 'svc_secret_TESTtestTESTtestTESTtestTESTtest123456';
  const REQ = 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z';
  const servers: Listening[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  async function serve(script: Script) {
    const s = await scripted(script);
    servers.push(s);
    return s;
  }
  const client = (url: string, more: object = {}) =>
    createServerClient({ baseUrl: url, secretKey: SECRET, retries: 3, backoff: { baseDelayMs: 1, maxDelayMs: 5 }, ...more });

  it('never repeats a claim that may have reached the service: a 503 and a timeout fail after one attempt', async () => {
    const s = await serve((_r, _n, res) => json(res, 503, { error: 'busy' }));
    const err = await caught(client(s.url).claimEvent(REQ));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ attempts: 1 });
    expect(s.seen.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([`POST /v1/events/${REQ}/claim {}`]);

    const hung = await serve(() => undefined);
    const slow = await caught(client(hung.url, { timeoutMs: 200 }).claimEvent(REQ, { maxAgeSeconds: 60 }));
    expect(slow).toBeInstanceOf(TimeoutError);
    expect(slow).toMatchObject({ attempts: 1 });
    expect(hung.seen.map((r) => r.body)).toEqual(['{"maxAgeSeconds":60}']);
  });

  it('repeats a claim refused with 429 (the service did nothing), and a preview through a 503', async () => {
    const claim = {
      requestId: REQ,
      visitorId: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      timestamp: 1,
      decision: { action: 'allow', rulesetVersion: 0, testMatches: [] },
    };
    const s = await serve((_r, n, res) => (n === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '0' }) : json(res, 200, claim)));
    expect(await client(s.url).claimEvent(REQ)).toMatchObject({ decision: { action: 'allow' } });
    expect(s.seen).toHaveLength(2);
    const limited = await serve((_r, _n, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '600' }));
    expect(await caught(client(limited.url).claimEvent(REQ))).toBeInstanceOf(RateLimitError);

    const preview = { examined: 0, matched: 0, errored: 0, sample: [], tookMs: 1 };
    const p = await serve((_r, n, res) => (n < 2 ? json(res, 503, { error: 'busy' }) : json(res, 200, preview)));
    expect(await client(p.url).previewRule({ expression: 'true' })).toEqual(preview);
    expect(p.seen.map((r) => r.method)).toEqual(['POST', 'POST', 'POST']);
    // A ruleset change is not repeated through a 503.
    const put = await serve((_r, _n, res) => json(res, 503, { error: 'busy' }));
    expect(await caught(client(put.url).putRuleset({ rules: [] }))).toMatchObject({ attempts: 1 });
  });

  it('a list deletion retried after a lost answer resolves on the 404 that follows; a first 404 is NotFoundError', async () => {
    const s = await serve((_r, n, res) =>
      n === 0 ? json(res, 502, { error: 'bad gateway' }) : json(res, 404, { error: 'List not found', code: 'list_not_found' }),
    );
    await client(s.url).deleteList('gone-list');
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['DELETE /v1/lists/gone-list', 'DELETE /v1/lists/gone-list']);
    const t = await serve((_r, _n, res) => json(res, 404, { error: 'List not found', code: 'list_not_found' }));
    expect(await caught(client(t.url).deleteList('a/b'))).toBeInstanceOf(NotFoundError);
    expect(t.seen.map((r) => r.url)).toEqual(['/v1/lists/a%2Fb']);
  });
});
