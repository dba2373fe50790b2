import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { BOT_CATALOG, BOT_CATEGORIES, BOT_LISTS, catalogEntryFor } from '../../../server/bots/catalog.js';
import { BotNames, readBotList, type BotResolver } from '../../../server/bots/verify.js';
import browsers from '../../fixtures/bots/browsers.json' with { type: 'json' };
import crawlers from '../../fixtures/bots/crawlers.json' with { type: 'json' };
import spoofed from '../../fixtures/bots/spoofed.json' with { type: 'json' };

const shippedDir = join(import.meta.dirname, '../../../server/bots/data');
const root = mkdtempSync(join(tmpdir(), 'deviceid-bots-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Expect {
  name: string;
  category: string;
  method: string;
  list?: string;
}
interface Sample {
  ua: string;
  ip: string;
  ptr?: string | null;
  forward?: string[];
  expect: Expect;
}

/** DNS as the corpus describes it: a crawler's PTR resolves back to it; a spoofer's PTR resolves to `forward` or nowhere. */
function corpusResolver(): BotResolver {
  const ptr = new Map<string, string[]>();
  const fwd = new Map<string, string[]>();
  for (const s of crawlers as Sample[]) {
    if (!s.ptr) continue;
    ptr.set(s.ip, [s.ptr]);
    fwd.set(s.ptr, [s.ip]);
  }
  for (const s of spoofed as Sample[]) {
    if (s.ptr === undefined) continue;
    ptr.set(s.ip, s.ptr === null ? [] : [s.ptr]);
    if (s.ptr) fwd.set(s.ptr, s.forward ?? []);
  }
  return {
    reverse: async (ip) => ptr.get(ip) ?? [],
    resolve: async (host) => fwd.get(host) ?? [],
  };
}

/** Classifies, lets the background rDNS finish, classifies again: what a second request from the address sees. */
async function settled(names: BotNames, ua: string, ip: string) {
  const first = names.classify(ua, ip);
  await names.idle();
  return { first, then: names.classify(ua, ip) };
}

const fixedClock = () => {
  let t = 1_700_000_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('the catalog', () => {
  it('names each bot once, with a known category, and every list it verifies by is shipped', () => {
    const names = BOT_CATALOG.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    for (const e of BOT_CATALOG) {
      expect(BOT_CATEGORIES).toContain(e.category);
      expect(e.source).toMatch(/^https?:\/\//);
      if (e.verify.method === 'rdns') expect(e.verify.suffixes.length).toBeGreaterThan(0);
    }
    for (const id of BOT_LISTS) {
      const read = readBotList(join(shippedDir, `${id}.json`));
      expect(read, id).not.toBeNull();
      expect(read!.list.source).toMatch(/github\.com\/[\w.-]+\/[\w.-]+ .*commit [0-9a-f]{12}/);
      expect(read!.list.date).toMatch(/^20\d\d-\d\d-\d\d$/);
    }
  });

  it('puts the more specific names first (Feedly says "like FeedFetcher-Google")', () => {
    expect(catalogEntryFor('Feedly/1.0 (+http://www.feedly.com/fetcher.html; 16 subscribers; like FeedFetcher-Google)')?.name).toBe('Feedly');
    expect(catalogEntryFor('Mozilla/5.0 (compatible; AhrefsSiteAudit/6.1; +http://ahrefs.com/robot/site-audit)')?.name).toBe('AhrefsSiteAudit');
    expect(catalogEntryFor('Mozilla/5.0 (compatible; Google-InspectionTool/1.0;)')?.name).toBe('Google-InspectionTool');
  });
});

describe('BotNames over the corpus', () => {
  const clock = fixedClock();
  const names = new BotNames({ now: clock.now, resolver: corpusResolver() });

  it('verifies the crawlers from their operators’ ranges and rDNS, and names every one', async () => {
    const all = crawlers as Sample[];
    const ranged = all.filter((s) => s.expect.method === 'ranges');
    let verified = 0;
    for (const s of ranged) {
      const c = names.classify(s.ua, s.ip);
      expect(c, s.ua).toMatchObject({ name: s.expect.name, category: s.expect.category, method: 'ranges' });
      expect(c!.listDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      if (c!.identity === 'verified') verified++;
    }
    const rdns = all.filter((s) => s.expect.method === 'rdns');
    let rdnsFirstUnknown = 0;
    let rdnsVerified = 0;
    for (const s of rdns) {
      const { first, then } = await settled(names, s.ua, s.ip);
      expect(then, s.ua).toMatchObject({ name: s.expect.name, category: s.expect.category, method: 'rdns', listDate: null });
      if (first!.identity === 'unknown') rdnsFirstUnknown++;
      if (then!.identity === 'verified') rdnsVerified++;
    }
    const none = all.filter((s) => s.expect.method === 'none');
    for (const s of none) {
      expect(names.classify(s.ua, s.ip), s.ua).toEqual({
        name: s.expect.name,
        provider: expect.any(String),
        category: s.expect.category,
        identity: 'unknown',
        listDate: null,
        method: 'none',
      });
    }
    console.log(
      `crawlers: ${all.length} (${new Set(all.map((s) => s.expect.name)).size} bots); by published ranges ${verified}/${ranged.length} verified ` +
        `(${((100 * verified) / ranged.length).toFixed(1)} %); by rDNS ${rdnsVerified}/${rdns.length} verified on the second sighting ` +
        `(${rdnsFirstUnknown} unknown on the first); unverifiable ${none.length}/${none.length} named, identity unknown`,
    );
    expect(ranged.length).toBeGreaterThanOrEqual(60);
    expect(verified / ranged.length).toBeGreaterThanOrEqual(0.99);
    expect(rdnsVerified).toBe(rdns.length);
    expect(rdnsFirstUnknown).toBe(rdns.length);
  });

  it('verifies none of the spoofed bots', async () => {
    const all = spoofed as Sample[];
    const counts: Record<string, number> = {};
    for (const s of all) {
      const { then } = await settled(names, s.ua, s.ip);
      expect(then, `${s.ua} from ${s.ip}`).toMatchObject({ name: s.expect.name, category: s.expect.category, method: s.expect.method });
      counts[then!.identity] = (counts[then!.identity] ?? 0) + 1;
    }
    console.log(`spoofed: ${all.length}; ${JSON.stringify(counts)}`);
    expect(all.length).toBeGreaterThanOrEqual(30);
    expect(counts.verified ?? 0).toBe(0);
    expect(counts.spoofed).toBe(all.length);
  });

  it('names none of the browsers as a bot', () => {
    const named = (browsers as { ua: string }[]).filter((b) => names.classify(b.ua, '73.162.21.14') !== null);
    console.log(`browsers: ${browsers.length}; named as bots: ${named.length}`);
    expect(browsers.length).toBe(200);
    expect(named.map((b) => b.ua)).toEqual([]);
  });
});

describe('BotNames by address', () => {
  const names = new BotNames({ now: () => 0, resolver: { reverse: async () => [], resolve: async () => [] } });
  const gptbot = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

  it('judges IPv6 and IPv4-mapped addresses, and leaves an unparseable one unknown', () => {
    const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const v6 = (crawlers as Sample[]).find((s) => s.expect.list === 'googlebot' && s.ip.includes(':'))!.ip;
    expect(names.classify(googlebot, v6)?.identity).toBe('verified');
    expect(names.classify(googlebot, '2001:db8::1')?.identity).toBe('spoofed');
    const v4 = (crawlers as Sample[]).find((s) => s.expect.list === 'gptbot')!.ip;
    expect(names.classify(gptbot, `::ffff:${v4}`)?.identity).toBe('verified');
    expect(names.classify(gptbot, 'not an address')).toMatchObject({ name: 'GPTBot', identity: 'unknown' });
  });

  it('calls a bot no catalog entry names unknown automation, and a browser nothing', () => {
    expect(names.classify('Mozilla/5.0 (compatible; NovelCrawler/0.3; +https://example.org/bot)', '198.51.100.7')).toEqual({
      name: expect.stringMatching(/crawler|bot/i),
      provider: 'unknown',
      category: 'unknown_automation',
      identity: 'unknown',
      listDate: null,
      method: 'none',
    });
    expect(names.classify('', '198.51.100.7')?.category).toBe('unknown_automation');
    expect(names.classify((browsers as { ua: string }[])[0]!.ua, '198.51.100.7')).toBeNull();
  });

  it('prefers a refreshed list in dataDir when it is as new or newer, and ignores a broken one', () => {
    const dir = join(root, 'refreshed');
    const ip = '192.0.2.77';
    mkdirSync(dir, { recursive: true });
    const write = (id: string, body: unknown) => writeFileSync(join(dir, `${id}.json`), JSON.stringify(body));
    write('gptbot', { source: 'test', date: '2099-01-01', prefixes: ['192.0.2.0/24'] });
    write('claudebot', { source: 'test', date: '1999-01-01', prefixes: ['192.0.2.0/24'] });
    write('chatgpt-user', { source: 'test', date: '2099-01-01', prefixes: ['192.0.2.0/24', 'nonsense'] });
    const refreshed = new BotNames({ now: () => 0, dataDir: dir, resolver: { reverse: async () => [], resolve: async () => [] } });
    expect(refreshed.classify(gptbot, ip)).toMatchObject({ identity: 'verified', listDate: '2099-01-01' });
    expect(refreshed.classify('Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', ip)?.identity).toBe('spoofed');
    expect(refreshed.classify('Mozilla/5.0 (compatible; ChatGPT-User/1.0; +https://openai.com/bot', ip)?.identity).toBe('spoofed');
    expect(refreshed.listDates().gptbot).toBe('2099-01-01');
    expect(refreshed.listDates().claudebot).toBe(names.listDates().claudebot);
  });
});

describe('BotNames by reverse DNS', () => {
  const yandex = 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)';
  const ip = '5.255.253.21';
  afterEach(() => vi.useRealTimers());

  /** A resolver whose answers the test hands out, counting its calls. */
  function scripted(ptr: Record<string, string[] | Error>, fwd: Record<string, string[] | Error>) {
    const calls = { reverse: 0, resolve: 0 };
    const answer = (v: string[] | Error | undefined) => (v instanceof Error ? Promise.reject(v) : Promise.resolve(v ?? []));
    const resolver: BotResolver = {
      reverse: (a) => (calls.reverse++, answer(ptr[a])),
      resolve: (h) => (calls.resolve++, answer(fwd[h])),
    };
    return { resolver, calls };
  }

  it('verifies a name under the operator’s domain that resolves back to the address', async () => {
    const { resolver } = scripted({ [ip]: ['5-255-253-21.spider.yandex.com.'] }, { '5-255-253-21.spider.yandex.com': ['5.255.253.21'] });
    const names = new BotNames({ now: () => 0, resolver });
    const { first, then } = await settled(names, yandex, ip);
    expect(first).toMatchObject({ name: 'YandexBot', identity: 'unknown', method: 'rdns' });
    expect(then).toMatchObject({ name: 'YandexBot', identity: 'verified', method: 'rdns', listDate: null });
  });

  it('calls a name under another domain spoofed, even one that contains the operator’s', async () => {
    const { resolver } = scripted({ [ip]: ['yandex.com.attacker.example'] }, { 'yandex.com.attacker.example': [ip] });
    const { then } = await settled(new BotNames({ now: () => 0, resolver }), yandex, ip);
    expect(then?.identity).toBe('spoofed');
    const { resolver: r2 } = scripted({ [ip]: ['notyandex.com'] }, { 'notyandex.com': [ip] });
    expect((await settled(new BotNames({ now: () => 0, resolver: r2 }), yandex, ip)).then?.identity).toBe('spoofed');
  });

  it('calls a forged PTR spoofed when the forward lookup does not give the address back', async () => {
    const { resolver } = scripted({ [ip]: ['spider-5-255-253-21.yandex.com'] }, { 'spider-5-255-253-21.yandex.com': ['5.255.253.99'] });
    const { then } = await settled(new BotNames({ now: () => 0, resolver }), yandex, ip);
    expect(then?.identity).toBe('spoofed');
  });

  it('checks the reverse name only where the operator documents no forward lookup (Baidu)', async () => {
    const baidu = 'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)';
    const { resolver, calls } = scripted({ '220.181.108.89': ['baiduspider-220-181-108-89.crawl.baidu.com'] }, {});
    const { then } = await settled(new BotNames({ now: () => 0, resolver }), baidu, '220.181.108.89');
    expect(then?.identity).toBe('verified');
    expect(calls.resolve).toBe(0);
  });

  it('answers unknown while a slow resolver works, looks up once, and verified once it has answered', async () => {
    let release!: (names: string[]) => void;
    const calls = { reverse: 0 };
    const resolver: BotResolver = {
      reverse: () => (calls.reverse++, new Promise((r) => (release = r))),
      resolve: async () => [ip],
    };
    const names = new BotNames({ now: () => 0, resolver });
    expect(names.classify(yandex, ip)?.identity).toBe('unknown');
    expect(names.classify(yandex, ip)?.identity).toBe('unknown');
    expect(calls.reverse).toBe(1);
    release(['5-255-253-21.spider.yandex.com']);
    await names.idle();
    expect(names.classify(yandex, ip)?.identity).toBe('verified');
    expect(calls.reverse).toBe(1);
  });

  it('answers unknown on a resolver failure, never throws, and tries again once the failure has expired', async () => {
    const clock = fixedClock();
    const { resolver, calls } = scripted({ [ip]: new Error('SERVFAIL') }, {});
    const names = new BotNames({ now: clock.now, resolver, dnsFailureTtlMs: 60_000 });
    const { then } = await settled(names, yandex, ip);
    expect(then?.identity).toBe('unknown');
    expect(calls.reverse).toBe(1);
    clock.advance(30_000);
    names.classify(yandex, ip);
    await names.idle();
    expect(calls.reverse).toBe(1);
    clock.advance(31_000);
    names.classify(yandex, ip);
    await names.idle();
    expect(calls.reverse).toBe(2);
  });

  it('answers unknown when the resolver is slower than dnsTimeoutMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const resolver: BotResolver = { reverse: () => new Promise<string[]>(() => {}), resolve: async () => [] };
    const names = new BotNames({ now: () => 0, resolver, dnsTimeoutMs: 500 });
    expect(names.classify(yandex, ip)?.identity).toBe('unknown');
    const idle = names.idle();
    await vi.advanceTimersByTimeAsync(500);
    await idle;
    expect(names.classify(yandex, ip)?.identity).toBe('unknown');
  });

  it('keeps a verdict for dnsCacheTtlMs, then looks again while still answering it', async () => {
    const clock = fixedClock();
    const { resolver, calls } = scripted({ [ip]: ['5-255-253-21.spider.yandex.com'] }, { '5-255-253-21.spider.yandex.com': [ip] });
    const names = new BotNames({ now: clock.now, resolver, dnsCacheTtlMs: 3_600_000 });
    await settled(names, yandex, ip);
    clock.advance(3_599_000);
    expect(names.classify(yandex, ip)?.identity).toBe('verified');
    expect(calls.reverse).toBe(1);
    clock.advance(2_000);
    expect(names.classify(yandex, ip)?.identity).toBe('verified');
    await names.idle();
    expect(calls.reverse).toBe(2);
  });

  it('bounds the lookups in flight and drops what overflows the queue until a later sighting', async () => {
    let inFlight = 0;
    let most = 0;
    const resolver: BotResolver = {
      reverse: async (a) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return [`${a.replaceAll('.', '-')}.spider.yandex.com`];
      },
      resolve: async (h) => [h.split('.')[0]!.replaceAll('-', '.')],
    };
    const names = new BotNames({ now: () => 0, resolver, dnsConcurrency: 4, dnsQueueMax: 20 });
    const ips = Array.from({ length: 40 }, (_, i) => `5.255.253.${i + 1}`);
    for (const a of ips) expect(names.classify(yandex, a)?.identity).toBe('unknown');
    await names.idle();
    expect(most).toBe(4);
    const verified = ips.filter((a) => names.classify(yandex, a)?.identity === 'verified');
    expect(verified.length).toBe(24); // 4 running + 20 queued; the rest are looked up now
    await names.idle();
    expect(ips.every((a) => names.classify(yandex, a)?.identity === 'verified')).toBe(true);
  });
});
