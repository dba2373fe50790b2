// What one identify costs the database, counted from the driver's commands,
// API key, project, account and quota included (they come from caches and
// quota leases in the steady state). A returning device this process has seen
// recently: 2 (the visitor's compare-and-swap update that records the visit
// and proves the cached visitor and token fresh, and the event with its search
// entries); one it has not: 4 (its token and its visitor read first). A first
// visit: at most 5 (its token and every index key in one read; candidate
// visitors in one read when there are any; the new visitor inserted with the
// visit recorded; the token claim and the index in one bulk write; the event).
// Through a first-party proxy the same: the agent's token and the device
// cookie are read in one command, and a first visit's cookie is written in the
// index's one bulk write. A linkedId (the proxy's) the same: read with the index's keys,
// written in its bulk write (a device known by its token, signed in with a
// linkedId for the first time: its list read and written once). The
// project's rules and lists (server/decisions/) cost nothing more: they come
// from caches that a change drops in every process, so the first identify
// after a change reads the new ruleset and what changed in the lists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_HEADERS } from '../../../contract/proxy.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let commands: string[] = [];
let quotaWork = 0;
let live: string;
let customer: Customer;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' }, (c) => commands.push(`${c.name} ${c.collection}`));
  customer = await signUp(h);
  live = await customer.key('live');
});
afterAll(async () => {
  await h.close();
});

/** Through a first-party proxy: its secret and headers, and the device cookie the previous answer set. */
interface Via {
  secret: string;
  cookie?: string;
  /** The browser's address (default 81.2.69.142). */
  ip?: string;
}

async function identify(seed: number, token: string, via?: Via, linkedId?: string): Promise<string[]> {
  commands = [];
  const body = identifyBody({ ...deviceValues(seed), deviceToken: { token, storage: 'localStorage', createdAt: 1 } }, linkedId ? { linkedId } : {});
  const req = h.http().post('/v1/identify').set('x-api-key', live);
  if (via) {
    req
      .set(PROXY_HEADERS.secret, via.secret)
      .set(PROXY_HEADERS.clientIp, via.ip ?? '81.2.69.142')
      .set(PROXY_HEADERS.host, 'shop.example.com')
      .set(PROXY_HEADERS.proto, 'https');
    if (via.cookie) req.set('cookie', via.cookie);
    // The one linkedId identification learns: the site's own session's, set by its proxy.
    if (linkedId) req.set(PROXY_HEADERS.linkedId, linkedId);
  }
  const res = await req.send(body);
  expect(res.status).toBe(200);
  if (via) via.cookie = (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0];
  // Quota leases and usage flushes land on whichever call needs them: counted apart, amortised below.
  // So are the traffic figures of first-party proxies (all calls counted, at most every 5 s), and the
  // key, project and account reads that refresh their caches once CACHE_TTL_MS of the clock has passed.
  const amortised = (c: string) => c.endsWith(' usage') || c.endsWith(' proxyStats') || /^find (apiKeys|projects|accounts)$/.test(c);
  quotaWork += commands.filter((c) => c.endsWith(' usage')).length;
  return commands.filter((c) => !amortised(c));
}

describe('database commands per identify', () => {
  it('a returning device costs 2 commands (4 in a process that has not seen it), a first visit at most 5 (steady state); the event is one insert', async () => {
    // Warm the process (key, project, account, quota lease) with other devices.
    for (let i = 0; i < 3; i++) expect((await identify(90_000 + i, `warm_token_${i}_${'x'.repeat(16)}`)).length).toBeLessThanOrEqual(5);
    const first = await identify(1, `roundtrip_token_${'x'.repeat(16)}`);
    h.clock.advance(500);
    const again = await identify(1, `roundtrip_token_${'x'.repeat(16)}`);
    // The same device with its storage cleared: a new token, and a candidate visitor to read and score.
    h.clock.advance(500);
    const cleared = await identify(1, `cleared_token_${'x'.repeat(16)}`);
    console.log(
      `first visit: ${first.length} commands (${first.join(', ')})\nreturning: ${again.length} commands (${again.join(', ')})\ncleared storage: ${cleared.length} commands (${cleared.join(', ')})`,
    );
    expect(again).toEqual(['update visitors', 'insert events']);
    // A device like no other: nothing to read but the index.
    expect(first).toEqual(['find fingerprints', 'insert visitors', 'update fingerprints', 'insert events']);
    // Another process, whose cache has never held the device: its token and its visitor are read.
    const other = await h.otherProcess((c) => commands.push(`${c.name} ${c.collection}`));
    await other
      .http()
      .post('/v1/identify')
      .set('x-api-key', live)
      .send(identifyBody(deviceValues(90_003)));
    h.clock.advance(100);
    commands = [];
    const body = identifyBody({ ...deviceValues(1), deviceToken: { token: `cleared_token_${'x'.repeat(16)}`, storage: 'localStorage', createdAt: 1 } });
    expect((await other.http().post('/v1/identify').set('x-api-key', live).send(body)).status).toBe(200);
    expect(commands.filter((c) => !c.endsWith(' usage'))).toEqual(['find fingerprints', 'find visitors', 'update visitors', 'insert events']);
    // The first process's cache now holds a revision the other process has written over: its write fails, and it reads afresh.
    h.clock.advance(100);
    expect(await identify(1, `cleared_token_${'x'.repeat(16)}`)).toEqual([
      'update visitors',
      'find fingerprints',
      'find visitors',
      'update visitors',
      'insert events',
    ]);
    h.clock.advance(100);
    expect(await identify(1, `cleared_token_${'x'.repeat(16)}`)).toEqual(['update visitors', 'insert events']);
    // A token the visitor held at an older revision is not vouched for: read, then proven by the write.
    h.clock.advance(100);
    expect(await identify(1, `roundtrip_token_${'x'.repeat(16)}`)).toEqual(['find fingerprints', 'find visitors', 'update visitors', 'insert events']);
    // The same device after clearing storage: its visitor is a candidate, read and scored, and the visit recorded on it.
    expect(cleared).toEqual(['find fingerprints', 'find visitors', 'update visitors', 'insert events', 'update fingerprints']);
    // The event, its search entries (and an outbox entry when there are webhooks) are one command.
    for (const commands of [first, again, cleared]) expect(commands.filter((c) => c.endsWith(' events'))).toEqual(['insert events']);
  });

  it('through a first-party proxy: the same commands as direct, the agent’s token and the device cookie read together', async () => {
    const secret = (await customer.agent.post(`/api/projects/${customer.projectId}/proxy/secret`).set('origin', customer.origin).send({})).body
      .secret as string;
    // Warm the caches again (the project changed) with other devices, directly and through the proxy.
    h.clock.advance(100);
    await identify(90_010, `warm_token_a_${'x'.repeat(16)}`);
    await identify(90_011, `warm_token_b_${'x'.repeat(16)}`, { secret });
    // Direct, then proxied, on devices of the same shape (the index holds as much for each).
    h.clock.advance(100);
    const direct = await identify(3, `direct_token_${'x'.repeat(16)}`);
    h.clock.advance(100);
    const directAgain = await identify(3, `direct_token_${'x'.repeat(16)}`);
    const via: Via = { secret };
    h.clock.advance(100);
    const first = await identify(4, `proxied_token_${'x'.repeat(16)}`, via);
    h.clock.advance(100);
    const again = await identify(4, `proxied_token_${'x'.repeat(16)}`, via);
    h.clock.advance(100);
    const storageLost = await identify(4, `after_itp_token_${'x'.repeat(16)}`, via);
    console.log(
      `direct first visit: ${direct.join(', ')}\nproxied first visit: ${first.join(', ')}\nproxied returning: ${again.join(', ')}\nproxied, new agent token (storage lost), known cookie: ${storageLost.join(', ')}`,
    );
    expect(again).toEqual(['update visitors', 'insert events']);
    expect(again).toEqual(directAgain);
    expect(first).toEqual(direct);
    // Storage lost: linked by the cookie (from the cache, with the new agent token read, and the index
    // keys with it), no candidate search; the new agent token and the visit's keys go to the index in one bulk write.
    expect(storageLost).toEqual(['find fingerprints', 'update visitors', 'insert events', 'update fingerprints']);
  });

  it("a signed-in device (its linkedId set by the site's proxy): the linkedId is read and written with the index's keys, in no command of its own", async () => {
    const secret = (await customer.agent.post(`/api/projects/${customer.projectId}/proxy/secret`).set('origin', customer.origin).send({})).body
      .secret as string;
    // Each on a network of its own, where no device of its model was seen: nothing to read but the index.
    const [plainVia, signedVia]: Via[] = [
      { secret, ip: '2.125.160.90' },
      { secret, ip: '89.160.20.112' },
    ];
    h.clock.advance(100);
    const plain = await identify(5, `plain_token_${'x'.repeat(16)}`, plainVia);
    h.clock.advance(100);
    const signedIn = await identify(6, `signed_token_${'x'.repeat(16)}`, signedVia, 'ada@example.com');
    expect(signedIn).toEqual(plain);
    h.clock.advance(100);
    expect(await identify(6, `signed_token_${'x'.repeat(16)}`, signedVia, 'ada@example.com')).toEqual(['update visitors', 'insert events']);
    // A device known by its token, signed in for the first time: the index reads the linkedId's list and writes it, once.
    const sorted = (xs: string[]) => [...xs].sort();
    h.clock.advance(100);
    expect(sorted(await identify(5, `plain_token_${'x'.repeat(16)}`, plainVia, 'grace@example.com'))).toEqual(
      sorted(['update visitors', 'insert events', 'find fingerprints', 'update fingerprints']),
    );
    h.clock.advance(100);
    expect(await identify(5, `plain_token_${'x'.repeat(16)}`, plainVia, 'grace@example.com')).toEqual(['update visitors', 'insert events']);
  });

  it('with rules and lists in force: the same commands; a change costs its first identify one read of the ruleset and one of the lists', async () => {
    const secret = await customer.key('secret');
    const v1 = (method: 'post' | 'put', path: string) => h.http()[method](path).set('authorization', `Bearer ${secret}`);
    expect((await v1('post', '/v1/lists').send({ name: 'blocked', kind: 'ip' })).status).toBe(201);
    expect((await v1('post', '/v1/lists/blocked/entries').send({ add: [{ value: '203.0.113.0/24' }] })).status).toBe(200);
    const rules = [
      { id: 'bots', name: 'Bots', expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'", action: 'block' },
      { id: 'blocked', name: 'Blocked', expression: "inList('blocked', ip) || cidr(ip, '198.51.100.0/24')", action: 'block' },
      { id: 'watch', name: 'Watch', expression: 'velocity.events.h1 > 20', action: 'review', mode: 'test' },
    ];
    expect((await v1('put', '/v1/ruleset').send({ rules })).status).toBe(200);
    h.clock.advance(100);
    const changed = await identify(7, `rules_token_${'x'.repeat(16)}`);
    expect(changed.filter((c) => / (rulesets|lists|listChanges|listEntries)$/.test(c)).length).toBeLessThanOrEqual(3);
    h.clock.advance(100);
    expect(await identify(7, `rules_token_${'x'.repeat(16)}`)).toEqual(['update visitors', 'insert events']);
  });

  it('the quota costs well under one command per call', async () => {
    quotaWork = 0;
    for (let i = 0; i < 50; i++) {
      h.clock.advance(100);
      await identify(2, `quota_token_${'x'.repeat(16)}`);
    }
    console.log(`quota work: ${quotaWork} commands over 50 calls`);
    expect(quotaWork).toBeLessThanOrEqual(10);
  });
});
