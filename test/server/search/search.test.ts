// GET /v1/events: every filter, their combinations, time bounds, order,
// pagination, bad input, account isolation; and the typed client's pages and
// iterator against the service on a real port.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { monotonicFactory } from 'ulid';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createServerClient, ValidationError, type EventSearchResult, type FullEvent } from '../../../clients/node/index.js';
import { SEARCH_SCAN_MAX } from '../../../contract/events.js';
import { ipPlan } from '../../../server/search/service.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const lists = mkdtempSync(join(tmpdir(), 'deviceid-search-lists-'));
writeFileSync(join(lists, 'tor-exits.txt'), '185.220.100.240\n');
writeFileSync(join(lists, 'vpn-ranges.txt'), '89.187.160.0/24\n');
writeFileSync(join(lists, 'proxy-list.txt'), '45.90.28.1\n');
writeFileSync(join(lists, 'blocklist-test.txt'), '103.21.244.9\n');

const HOUR = 3600_000;
const t0 = Date.UTC(2026, 0, 15, 12);

let h: Harness;
let srv: Listening;
let live: string;
let secret: string;
let otherLive: string;
const ids: Record<string, { requestId: string; visitorId: string }> = {};

type V = ReturnType<typeof deviceValues>;
const headless = (v: V): V => ({ ...v, automation: { ...v.automation, webdriver: true, headlessUserAgent: true } });
const googlebot = (v: V): V => ({
  ...v,
  userAgent: { ...v.userAgent, userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/130.0.0.0 Safari/537.36' },
});

async function identify(name: string, key: string, ip: string, v: V, at: number, extra: Record<string, unknown> = {}) {
  h.clock.set(at);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(identifyBody(v, extra));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  ids[name] = res.body;
}

const search = async (query: string) => {
  const res = await request(h.app).get(`/v1/events?${query}`).set('authorization', `Bearer ${secret}`);
  return res;
};
const found = async (query: string) => {
  const res = await search(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.events as FullEvent[]).map((e) => e.requestId);
};
const req = (...names: string[]) => names.map((n) => ids[n]!.requestId);
/** The verdicts each event got (a datacenter network with a disagreeing time zone is a VPN too). */
const verdicts: Record<string, FullEvent['verdicts']> = {};
const where = (names: string[], test: (v: FullEvent['verdicts']) => boolean) => names.filter((n) => test(verdicts[n]!));

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', LISTS_DIR: lists, TRUST_PROXY: '127.0.0.1/32,::1' });
  srv = await listenApp(h.app);
  const c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  otherLive = await (await signUp(h)).key('live');

  const a = deviceValues(501);
  await identify('a1', live, '8.8.8.8', a, t0);
  await identify('a2', live, '8.8.8.8', a, t0 + HOUR, { linkedId: 'user-1' });
  await identify('a3', live, '8.8.4.4', a, t0 + 2 * HOUR);
  await identify('vpn', live, '89.187.160.5', deviceValues(502), t0 + 3 * HOUR, { linkedId: 'user-1' });
  await identify('tor', live, '185.220.100.240', deviceValues(503), t0 + 4 * HOUR);
  await identify('bad', live, '8.9.10.11', headless(deviceValues(504)), t0 + 5 * HOUR);
  await identify('good', live, '66.249.66.1', googlebot(deviceValues(505)), t0 + 6 * HOUR);
  await identify('v6', live, '2001:4860:4860::8888', deviceValues(506), t0 + 7 * HOUR);
  await identify('v6b', live, '2001:4860:1234::1', deviceValues(507), t0 + 8 * HOUR);
  // Another account's event with the same IP and linkedId is never found.
  await identify('other', otherLive, '8.8.8.8', deviceValues(508), t0 + 9 * HOUR, { linkedId: 'user-1' });
  for (const name of Object.keys(ids)) {
    if (name === 'other') continue;
    verdicts[name] = (await request(h.app).get(`/v1/events/${ids[name]!.requestId}`).set('authorization', `Bearer ${secret}`)).body.verdicts;
  }
});
afterAll(async () => {
  await srv.close();
  await h.close();
  rmSync(lists, { recursive: true, force: true });
});

describe('GET /v1/events filters', () => {
  const all = ['v6b', 'v6', 'good', 'bad', 'tor', 'vpn', 'a3', 'a2', 'a1'];

  it('without filters: every event of the account, newest first', async () => {
    expect(await found('limit=100')).toEqual(req(...all));
    expect(await found('limit=100&reverse=true')).toEqual(req(...all).reverse());
  });

  it('visitorId, linkedId and both', async () => {
    expect(ids.a1!.visitorId).toBe(ids.a3!.visitorId);
    expect(await found(`visitorId=${ids.a1!.visitorId}`)).toEqual(req('a3', 'a2', 'a1'));
    expect(await found('linkedId=user-1')).toEqual(req('vpn', 'a2'));
    expect(await found(`linkedId=user-1&visitorId=${ids.a1!.visitorId}`)).toEqual(req('a2'));
    expect(await found('linkedId=nobody')).toEqual([]);
    // A well-formed id nobody has: nothing, not an error.
    expect(await found('visitorId=iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).toEqual([]);
  });

  it('ip: an address, and CIDRs of every width (split, exact level, coarser level with a check)', async () => {
    expect(await found('ip=8.8.8.8')).toEqual(req('a2', 'a1'));
    expect(await found('ip=8.8.8.8/32')).toEqual(req('a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('8.8.8.0/24')}`)).toEqual(req('a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('8.8.0.0/16')}`)).toEqual(req('a3', 'a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('8.8.0.0/20')}`)).toEqual(req('a3', 'a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('8.8.4.0/22')}`)).toEqual(req('a3'));
    expect(await found(`ip=${encodeURIComponent('8.0.0.0/9')}`)).toEqual(req('bad', 'a3', 'a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('8.0.0.0/8')}`)).toEqual(req('bad', 'a3', 'a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('0.0.0.0/4')}`)).toEqual(req('bad', 'a3', 'a2', 'a1'));
    expect(await found(`ip=${encodeURIComponent('2001:4860:4860::8888')}`)).toEqual(req('v6'));
    expect(await found(`ip=${encodeURIComponent('2001:4860::/32')}`)).toEqual(req('v6b', 'v6'));
    expect(await found(`ip=${encodeURIComponent('2001:4860:4860::/48')}`)).toEqual(req('v6'));
    expect(await found(`ip=${encodeURIComponent('2001:4860:4860::/50')}`)).toEqual(req('v6'));
    expect(await found(`ip=${encodeURIComponent('::ffff:8.8.4.4')}`)).toEqual(req('a3'));
  });

  it('ip with another filter driving: checked on each entry, at the exact level or within a coarser one', async () => {
    const A = ids.a1!.visitorId;
    expect(await found(`visitorId=${A}&ip=8.8.8.8`)).toEqual(req('a2', 'a1'));
    expect(await found(`visitorId=${A}&ip=${encodeURIComponent('8.8.4.0/22')}`)).toEqual(req('a3'));
    expect(await found(`visitorId=${A}&ip=${encodeURIComponent('8.8.0.0/18')}`)).toEqual(req('a3', 'a2', 'a1'));
    expect(await found(`visitorId=${A}&ip=${encodeURIComponent('8.8.8.128/25')}`)).toEqual([]);
    expect(await found('linkedId=user-1&ip=8.8.8.8')).toEqual(req('a2'));
    expect(await found(`linkedId=user-1&ip=${encodeURIComponent('89.187.0.0/16')}`)).toEqual(req('vpn'));
    expect(await found(`linkedId=user-1&ip=${encodeURIComponent('2001:4860::/32')}`)).toEqual([]);
  });

  it('bot, vpn, tor', async () => {
    expect(await found('bot=bad')).toEqual(req('bad'));
    expect(await found('bot=good')).toEqual(req('good'));
    expect(await found('bot=all')).toEqual(req('good', 'bad'));
    expect(await found('bot=none&limit=100')).toEqual(req('v6b', 'v6', 'tor', 'vpn', 'a3', 'a2', 'a1'));
    expect(where(all, (v) => v.vpn.result)).toContain('vpn');
    expect(where(all, (v) => v.tor.result)).toEqual(['tor']);
    expect(await found('vpn=true&limit=100')).toEqual(req(...where(all, (v) => v.vpn.result)));
    expect(await found('vpn=false&limit=100')).toEqual(req(...where(all, (v) => !v.vpn.result)));
    expect(await found('tor=true')).toEqual(req('tor'));
    expect(await found('vpn=false&tor=false&bot=none&limit=100')).toEqual(req(...where(['v6b', 'v6', 'a3', 'a2', 'a1'], (v) => !v.vpn.result)));
    expect(await found('linkedId=user-1&vpn=true')).toEqual(req(...where(['vpn', 'a2'], (v) => v.vpn.result)));
  });

  it('suspect follows PATCH, and so does a changed linkedId', async () => {
    expect(await found('suspect=true')).toEqual([]);
    const patch = (id: string, body: object) => request(h.app).patch(`/v1/events/${id}`).set('authorization', `Bearer ${secret}`).send(body);
    expect((await patch(ids.a1!.requestId, { suspect: true })).status).toBe(200);
    expect((await patch(ids.tor!.requestId, { suspect: true, linkedId: 'user-2' })).status).toBe(200);
    expect(await found('suspect=true')).toEqual(req('tor', 'a1'));
    expect(await found(`suspect=false&visitorId=${ids.a1!.visitorId}`)).toEqual(req('a3', 'a2'));
    expect(await found('linkedId=user-2&tor=true&suspect=true')).toEqual(req('tor'));
    expect((await patch(ids.a1!.requestId, { suspect: false })).status).toBe(200);
    expect((await patch(ids.tor!.requestId, { linkedId: null })).status).toBe(200);
    expect(await found('suspect=true')).toEqual(req('tor'));
    expect(await found('linkedId=user-2')).toEqual([]);
    expect((await patch(ids.tor!.requestId, { suspect: false })).status).toBe(200);
  });

  it('start and end bound the time (inclusive), in either order of results', async () => {
    expect(await found(`start=${t0 + HOUR}&end=${t0 + 3 * HOUR}`)).toEqual(req('vpn', 'a3', 'a2'));
    expect(await found(`start=${t0 + HOUR}&end=${t0 + 3 * HOUR}&reverse=true`)).toEqual(req('a2', 'a3', 'vpn'));
    expect(await found(`start=${t0 + 7 * HOUR + 1}`)).toEqual(req('v6b'));
    expect(await found(`end=${t0 - 1}`)).toEqual([]);
    expect(await found(`ip=8.8.8.8&start=${t0 + 1}`)).toEqual(req('a2'));
  });

  it('pages with an opaque paginationKey, newest first and reversed, without gaps or repeats', async () => {
    for (const reverse of [false, true]) {
      const seen: string[] = [];
      let key: string | undefined;
      let pages = 0;
      do {
        const res = await search(`limit=2${reverse ? '&reverse=true' : ''}${key ? `&paginationKey=${key}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.events.map((e: FullEvent) => e.requestId));
        key = res.body.paginationKey;
        pages++;
      } while (key && pages < 20);
      const expected = req(...all);
      expect(seen).toEqual(reverse ? expected.reverse() : expected);
    }
    // The last page has no key.
    const last = await search('limit=100');
    expect(last.body).not.toHaveProperty('paginationKey');
  });

  it('answers 400 naming the field for bad input, and 401 without a secret key', async () => {
    const cases: [string, RegExp][] = [
      ['ip=8.8.8', /^ip: /],
      ['ip=8.8.8.8/33', /^ip: /],
      [`ip=${encodeURIComponent('0.0.0.0/2')}`, /^ip: CIDR too wide/],
      ['bot=maybe', /^bot: /],
      ['vpn=yes', /^vpn: /],
      ['start=-1', /^start: /],
      ['end=soon', /^end: /],
      [`start=${t0}&end=${t0 - 1}`, /^start: must not be after end/],
      ['limit=0', /^limit: /],
      ['limit=101', /^limit: /],
      ['paginationKey=not-a-key', /^paginationKey: /],
      ['visitorId=someone', /^visitorId: /],
      ['linkedId=', /^linkedId: /],
      ['color=red', /color/],
    ];
    for (const [query, message] of cases) {
      const res = await search(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatch(message);
    }
    expect((await request(h.app).get('/v1/events').set('authorization', `Bearer ${live}`)).status).toBe(401);
  });
});

describe('GET /v1/events verdict, score and country filters', () => {
  // An account of its own, so that the events above stay as they are.
  let key: string;
  let secretKey: string;
  const mine: Record<string, string> = {};
  const events: Record<string, FullEvent> = {};
  const get = async (query: string, header: 'bearer' | 'x-api-key' = 'bearer') => {
    const r = request(h.app).get(`/v1/events?${query}&limit=100`);
    const res = await (header === 'bearer' ? r.set('authorization', `Bearer ${secretKey}`) : r.set('x-api-key', secretKey));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.events as FullEvent[]).map((e) => e.requestId);
  };
  const expected = (test: (e: FullEvent) => boolean) =>
    Object.values(events)
      .filter(test)
      .sort((x, y) => (x.requestId < y.requestId ? 1 : -1))
      .map((e) => e.requestId);

  beforeAll(async () => {
    const c = await signUp(h);
    key = await c.key('live');
    secretKey = await c.key('secret');
    const at = t0 + 20 * HOUR;
    const make = async (name: string, ip: string, v: V, n: number) => {
      h.clock.set(at + n * 1000);
      const res = await request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(identifyBody(v));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      mine[name] = res.body.requestId;
    };
    const base = deviceValues(601);
    await make('plain', '81.2.69.160', base, 0);
    await make('incognito', '81.2.69.161', { ...deviceValues(602), incognito: { ...base.incognito, likely: true } }, 1);
    await make(
      'tampered',
      '81.2.69.162',
      { ...deviceValues(603), tampering: { lieCount: 9, lies: ['Navigator.hardwareConcurrency'], canvasNoise: 40, audioNoise: 3 } },
      2,
    );
    await make('vm', '81.2.69.163', { ...deviceValues(604), virtualMachine: { softwareRenderer: true, virtualGpu: 'VMware', markers: ['vmware'] } }, 3);
    await make('devtools', '81.2.69.164', { ...deviceValues(605), devtools: { open: true, widthGap: 600, heightGap: 90 } }, 4);
    await make('proxy', '45.90.28.1', deviceValues(606), 5);
    await make('blocked', '103.21.244.9', headless(deviceValues(607)), 6);
    await make('us', '8.8.8.8', deviceValues(608), 7);
    for (const [name, requestId] of Object.entries(mine)) {
      events[name] = (await request(h.app).get(`/v1/events/${requestId}`).set('authorization', `Bearer ${secretKey}`)).body;
    }
  });

  it('each verdict filter, true and false, matches the verdict of the full event', async () => {
    const verdictsOf = (e: FullEvent) => e.verdicts as unknown as Record<string, { result: boolean }>;
    for (const name of ['proxy', 'incognito', 'tampering', 'virtualMachine', 'devtools', 'ipBlocklist']) {
      const yes = expected((e) => verdictsOf(e)[name]!.result);
      expect(yes.length, `${name}=true finds something`).toBeGreaterThan(0);
      expect(await get(`${name}=true`), name).toEqual(yes);
      expect(await get(`${name}=false`), name).toEqual(expected((e) => !verdictsOf(e)[name]!.result));
    }
    // With another filter driving, and combined.
    expect(await get('tor=false&incognito=true')).toEqual(expected((e) => e.verdicts.incognito.result && !e.verdicts.tor.result));
    expect(await get('incognito=true&devtools=true')).toEqual(expected((e) => e.verdicts.incognito.result && e.verdicts.devtools.result));
  });

  it('minSuspectScore and country; a secret key in X-API-Key works as well as Bearer', async () => {
    const scores = [...new Set(Object.values(events).map((e) => e.suspectScore))].sort((x, y) => x - y);
    expect(scores.length).toBeGreaterThan(1);
    for (const min of [0, ...scores, 100]) expect(await get(`minSuspectScore=${min}`), String(min)).toEqual(expected((e) => e.suspectScore >= min));
    const countries = [...new Set(Object.values(events).map((e) => e.signals.server.geo.country))].filter(Boolean);
    expect(countries.length).toBeGreaterThan(1);
    for (const country of countries) {
      expect(await get(`country=${country.toLowerCase()}`), country).toEqual(expected((e) => e.signals.server.geo.country === country));
    }
    expect(await get('country=ZZ')).toEqual([]);
    expect(await get(`country=${countries[0]}`, 'x-api-key')).toEqual(await get(`country=${countries[0]}`));
  });

  it('events indexed before their entries carried these facts are checked once read', async () => {
    // Entries of an older version: only the bot kind, VPN, Tor and suspect facts.
    const col = h.store.db.collection<{ _id: string; f: Record<string, unknown> }>('events');
    const old = events.incognito!.requestId;
    const ulid = old.slice(4);
    const entries = await col.find({ _id: { $regex: `\\|${ulid}$` } } as never).toArray();
    expect(entries.length).toBeGreaterThan(5);
    for (const e of entries) await col.updateOne({ _id: e._id }, { $set: { f: { b: e.f.b, n: e.f.n, t: e.f.t, s: e.f.s } } });
    expect(await get('incognito=true')).toEqual(expected((e) => e.verdicts.incognito.result));
    expect(await get('incognito=false')).toEqual(expected((e) => !e.verdicts.incognito.result));
    expect(await get('minSuspectScore=0')).toEqual(expected(() => true));
  });

  it('answers 400 for bad values', async () => {
    for (const [query, message] of [
      ['incognito=yes', /^incognito: must be true or false/],
      ['proxy=1', /^proxy: /],
      ['minSuspectScore=101', /^minSuspectScore: /],
      ['minSuspectScore=1e1', /^minSuspectScore: /],
      ['country=GBR', /^country: must be an ISO 3166-1 alpha-2 country code/],
    ] as const) {
      const res = await request(h.app).get(`/v1/events?${query}`).set('authorization', `Bearer ${secretKey}`);
      expect([res.status, res.body.error], query).toEqual([400, expect.stringMatching(message)]);
    }
  });

  it('the typed client sends every filter', async () => {
    const client = createServerClient({ baseUrl: srv.url, secretKey });
    const r = await client.searchEvents({
      incognito: true,
      proxy: false,
      tampering: false,
      virtualMachine: false,
      devtools: false,
      ipBlocklist: false,
      minSuspectScore: 0,
      country: events.incognito!.signals.server.geo.country,
      limit: 100,
    });
    expect(r.events.map((e) => e.requestId)).toEqual([events.incognito!.requestId]);
    await expect(client.searchEvents({ incognito: 'yes' as never })).rejects.toThrow(TypeError);
  });
});

describe('the scan limit', () => {
  it(`examines at most ${SEARCH_SCAN_MAX} entries per request: a page may be empty and still carry a key`, async () => {
    // Another account whose index holds more non-matching entries than one request examines.
    const other = await signUp(h);
    const otherSecret = await other.key('secret');
    const next = monotonicFactory();
    const entries = Array.from({ length: SEARCH_SCAN_MAX + 50 }, () => {
      const u = next(t0);
      return {
        _id: `${other.accountId}|a|${u}`,
        r: `req_${u}`,
        ip: '192.0.2.1',
        v: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
        f: { b: 'none', n: false, t: false, s: true },
      };
    });
    await h.store.db.collection('events').insertMany(entries as never[]);
    try {
      const page = (key?: string) =>
        request(h.app)
          .get(`/v1/events?suspect=false${key ? `&paginationKey=${key}` : ''}`)
          .set('authorization', `Bearer ${otherSecret}`);
      const first = await page();
      expect(first.status).toBe(200);
      expect(first.body.events).toEqual([]);
      expect(first.body.paginationKey).toEqual(expect.any(String));
      const second = await page(first.body.paginationKey);
      expect(second.body).toEqual({ events: [] });
    } finally {
      await h.store.db.collection('events').deleteMany({ _id: { $gt: `${other.accountId}|`, $lt: `${other.accountId}|~` } } as never);
    }
  });
});

describe('ipPlan', () => {
  it('splits into at most 16 ranges of a finer level, else reads a coarser level and checks each entry', () => {
    expect(ipPlan('8.8.8.8')).toEqual({ prefixes: ['i4_32|08080808'], contains: null });
    expect(ipPlan('8.8.0.0/20').prefixes).toHaveLength(16);
    expect(ipPlan('8.8.0.0/20').prefixes[15]).toBe('i4_24|08080f');
    const coarse = ipPlan('8.8.0.0/18');
    expect(coarse.prefixes).toEqual(['i4_16|0808']);
    expect(coarse.contains!('8.8.63.1')).toBe(true);
    expect(coarse.contains!('8.8.64.1')).toBe(false);
    expect(ipPlan('2001:db8::/64').prefixes).toEqual(['i6_64|20010db800000000']);
  });
});

describe('typed client', () => {
  it('searchEvents, searchEventPages and searchAllEvents', async () => {
    const client = createServerClient({ baseUrl: srv.url, secretKey: secret, validateResponses: true });
    const page = await client.searchEvents({ ip: '8.8.0.0/16', limit: 2 });
    expectTypeOf(page).toEqualTypeOf<EventSearchResult>();
    expect(page.events.map((e) => e.requestId)).toEqual(req('a3', 'a2'));
    expect(page.paginationKey).toEqual(expect.any(String));

    const pages: string[][] = [];
    for await (const p of client.searchEventPages({ limit: 4, bot: 'none', tor: false })) pages.push(p.events.map((e) => e.requestId));
    expect(pages.flat()).toEqual(req('v6b', 'v6', 'vpn', 'a3', 'a2', 'a1'));
    expect(pages.length).toBeGreaterThanOrEqual(2);

    const events: FullEvent[] = [];
    for await (const e of client.searchAllEvents({ limit: 3, start: new Date(t0 + HOUR), reverse: true })) events.push(e);
    expect(events.map((e) => e.requestId)).toEqual(req('a2', 'a3', 'vpn', 'tor', 'bad', 'good', 'v6', 'v6b'));
    const firstTwo: FullEvent[] = [];
    for await (const e of client.searchAllEvents({ limit: 1, maxPages: 2 })) firstTwo.push(e);
    expect(firstTwo.map((e) => e.requestId)).toEqual(req('v6b', 'v6'));

    await expect(client.searchEvents({ ip: 'nope' })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.searchEvents({ suspect: 'yes' as never })).rejects.toThrow(TypeError);
    // The old form still works.
    expect((await client.searchEvents({ linkedId: 'user-1' })).events.map((e) => e.requestId)).toEqual(req('vpn', 'a2'));
  });
});
