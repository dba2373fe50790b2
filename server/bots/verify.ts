// Named bots, judged by where they come from. A User-Agent that says
// "Googlebot" is a claim; the address says whether Google sent it: inside
// the ranges the operator publishes (or behind its reverse DNS, for the
// operators that document that instead) it is verified, elsewhere spoofed.
// Bots whose operator publishes no way to check (HTTP libraries, most feed
// readers) stay 'unknown': a bot, but not one we can vouch for.
//
// classify() is synchronous (it runs on identify's path). Range lookups are
// binary searches over the shipped lists (server/bots/data, or the copies
// scripts/refresh-lists.mjs writes into dataDir). Reverse DNS runs in the
// background: the first sighting of an address answers 'unknown', later ones
// answer from the cache.
import { promises as dns } from 'node:dns';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isbot, isbotMatch } from 'isbot';
import { LRUCache } from 'lru-cache';
import { normalizeIp, type Ip } from '../edge/address.js';
import { RangeSet } from '../edge/ranges.js';
import { repoFile } from '../paths.js';
import { BOT_LISTS, catalogEntryFor, type BotCategory, type BotEntry, type BotIdentity } from './catalog.js';

export interface BotClaim {
  name: string;
  provider: string;
  category: BotCategory;
  identity: Exclude<BotIdentity, 'signed'>;
  /** The date of the range list the address was judged by (method 'ranges'); null otherwise. */
  listDate: string | null;
  method: 'ranges' | 'rdns' | 'none';
}

export interface BotResolver {
  /** PTR names of an address; [] when it has none. */
  reverse(ip: string): Promise<string[]>;
  /** Addresses (A and AAAA) of a name; [] when it has none. */
  resolve(host: string): Promise<string[]>;
}

export interface BotNamesOptions {
  now: () => number;
  resolver?: BotResolver;
  /** Per lookup (reverse, then forward); past it the answer is 'unknown'. Default 500. */
  dnsTimeoutMs?: number;
  /** How long a verified or spoofed rDNS answer is kept. Default one hour. */
  dnsCacheTtlMs?: number;
  /** Where refreshed lists are (`<LISTS_DIR>/bots`, as scripts/refresh-lists.mjs writes them); a list there wins over the shipped copy when it is as new or newer. */
  dataDir?: string;
  /** How long an rDNS failure or timeout is kept before the address is tried again. Default one minute. */
  dnsFailureTtlMs?: number;
  /** rDNS verifications in flight at once. Default 8. */
  dnsConcurrency?: number;
  /** Verifications waiting for a place; past it an address is left 'unknown' and tried at a later sighting. Default 1000. */
  dnsQueueMax?: number;
}

/** One range list as shipped or refreshed. */
export interface BotList {
  source: string;
  date: string;
  prefixes: string[];
}

const SHIPPED_DIR = fileURLToPath(repoFile('server/bots/data'));
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function tooWide(cidr: string): boolean {
  const m = /\/(\d{1,3})$/.exec(cidr);
  if (!m) return false;
  return Number(m[1]) < (cidr.includes(':') ? 16 : 8);
}

/** Reads and checks one list file; null when it is missing or not a list (never half a list). */
export function readBotList(file: string): { list: BotList; set: RangeSet } | null {
  if (!existsSync(file)) return null;
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<BotList>;
    if (typeof raw.source !== 'string' || typeof raw.date !== 'string' || !DATE.test(raw.date)) return null;
    if (!Array.isArray(raw.prefixes) || raw.prefixes.length === 0 || !raw.prefixes.every((p) => typeof p === 'string')) return null;
    // A prefix this wide would vouch for a whole provider: no operator publishes one for a crawler.
    if (raw.prefixes.some((p) => tooWide(p))) return null;
    const { set, rejected } = RangeSet.fromCidrs(raw.prefixes);
    if (rejected.length > 0) return null;
    return { list: { source: raw.source, date: raw.date, prefixes: raw.prefixes }, set };
  } catch {
    return null;
  }
}

/** Node's resolver: PTR, then A and AAAA. "No such name/record" is an empty answer; anything else rejects. */
function systemResolver(timeoutMs: number): BotResolver {
  const r = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  const none = (err: unknown): string[] => {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
    throw err;
  };
  return {
    reverse: (ip) => r.reverse(ip).catch(none),
    resolve: async (host) => {
      const [a, aaaa] = await Promise.all([r.resolve4(host).catch(none), r.resolve6(host).catch(none)]);
      return [...a, ...aaaa];
    },
  };
}

type RdnsVerdict = 'verified' | 'spoofed' | 'unknown';

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup over ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** The product token around what isbot matched ("NovelCrawler" for "Crawl" in "NovelCrawler/0.3"), at most 64 characters. */
function productAround(ua: string, match: string | null): string {
  const at = match ? ua.indexOf(match) : -1;
  if (at < 0) return (match ?? 'unnamed').slice(0, 64);
  let start = at;
  let end = at + match!.length;
  const token = /[\w.+-]/;
  while (start > 0 && token.test(ua[start - 1]!)) start--;
  while (end < ua.length && token.test(ua[end]!)) end++;
  return ua.slice(start, end).slice(0, 64);
}

const endsWithDomain = (host: string, suffix: string): boolean => host === suffix || host.endsWith(`.${suffix}`);
const hostName = (h: string): string => h.trim().toLowerCase().replace(/\.$/, '');

export class BotNames {
  private readonly lists = new Map<string, { date: string; set: RangeSet }>();
  private readonly resolver: BotResolver;
  private readonly dnsTimeoutMs: number;
  private readonly dnsCacheTtlMs: number;
  private readonly dnsFailureTtlMs: number;
  private readonly concurrency: number;
  private readonly queueMax: number;
  /** `suffixes|forward|ip` → verdict and when it expires (by opts.now). */
  private readonly rdnsCache = new LRUCache<string, { verdict: RdnsVerdict; expires: number }>({ max: 50_000 });
  private readonly inFlight = new Set<string>();
  private readonly queue: { key: string; run: () => Promise<void> }[] = [];
  private running = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** UA → catalog entry (or null): the same few hundred User-Agents make most traffic. */
  private readonly uaCache = new LRUCache<string, { entry: BotEntry | null; generic: string | null }>({ max: 5_000 });

  constructor(private readonly opts: BotNamesOptions) {
    this.dnsTimeoutMs = opts.dnsTimeoutMs ?? 500;
    this.dnsCacheTtlMs = opts.dnsCacheTtlMs ?? 3_600_000;
    this.dnsFailureTtlMs = opts.dnsFailureTtlMs ?? 60_000;
    this.concurrency = Math.max(1, opts.dnsConcurrency ?? 8);
    this.queueMax = Math.max(0, opts.dnsQueueMax ?? 1000);
    this.resolver = opts.resolver ?? systemResolver(this.dnsTimeoutMs);
    for (const id of BOT_LISTS) {
      const shipped = readBotList(join(SHIPPED_DIR, `${id}.json`));
      const refreshed = opts.dataDir ? readBotList(join(opts.dataDir, `${id}.json`)) : null;
      const best = refreshed && (!shipped || refreshed.list.date >= shipped.list.date) ? refreshed : shipped;
      if (best) this.lists.set(id, { date: best.list.date, set: best.set });
    }
  }

  /** The date of each range list in use (a missing list is absent). */
  listDates(): Record<string, string> {
    return Object.fromEntries([...this.lists].map(([id, l]) => [id, l.date]));
  }

  /**
   * Synchronous, on identify's path: the claim the UA makes and how the address judges it; null for a UA that claims
   * no bot (an ordinary browser). rDNS verification runs in the background: the first sighting of an address is
   * 'unknown', later ones verified/spoofed from the cache.
   */
  classify(userAgent: string, ip: string): BotClaim | null {
    const { entry, generic } = this.nameOf(userAgent);
    if (!entry) {
      if (generic === null) return null;
      return { name: generic, provider: 'unknown', category: 'unknown_automation', identity: 'unknown', listDate: null, method: 'none' };
    }
    const base = { name: entry.name, provider: entry.provider, category: entry.category };
    const v = entry.verify;
    if (v.method === 'none') return { ...base, identity: 'unknown', listDate: null, method: 'none' };
    const addr = normalizeIp(ip);
    if (v.method === 'ranges') {
      const list = this.lists.get(v.list);
      if (!list || !addr) return { ...base, identity: 'unknown', listDate: list?.date ?? null, method: 'ranges' };
      return { ...base, identity: list.set.has(addr) ? 'verified' : 'spoofed', listDate: list.date, method: 'ranges' };
    }
    const identity = addr ? this.rdns(addr, v.suffixes, v.forward !== false) : 'unknown';
    return { ...base, identity, listDate: null, method: 'rdns' };
  }

  /** Resolves when no rDNS verification is running or waiting (tests; shutdown). */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private nameOf(userAgent: string): { entry: BotEntry | null; generic: string | null } {
    const ua = userAgent.length > 1000 ? userAgent.slice(0, 1000) : userAgent;
    const hit = this.uaCache.get(ua);
    if (hit) return hit;
    const entry = catalogEntryFor(ua);
    // isbot names anything automated; an empty UA is one too (no browser sends none).
    const generic = entry ? null : isbot(ua) ? productAround(ua, isbotMatch(ua)) : ua.trim() === '' ? 'empty user agent' : null;
    const out = { entry, generic };
    this.uaCache.set(ua, out);
    return out;
  }

  private rdns(ip: Ip, suffixes: string[], forward: boolean): RdnsVerdict {
    const key = `${suffixes.join(',')}|${forward ? 'f' : 'r'}|${ip.address}`;
    const cached = this.rdnsCache.get(key);
    if (cached && cached.expires > this.opts.now()) return cached.verdict;
    if (!this.inFlight.has(key)) this.schedule(key, () => this.lookup(key, ip, suffixes, forward));
    // An expired answer stands while it is looked up again.
    return cached?.verdict ?? 'unknown';
  }

  private schedule(key: string, run: () => Promise<void>): void {
    if (this.running >= this.concurrency) {
      if (this.queue.length >= this.queueMax) return; // tried again at a later sighting
      this.inFlight.add(key);
      this.queue.push({ key, run });
      return;
    }
    this.inFlight.add(key);
    this.start(key, run);
  }

  private start(key: string, run: () => Promise<void>): void {
    this.running++;
    void run().finally(() => {
      this.running--;
      this.inFlight.delete(key);
      const next = this.queue.shift();
      if (next) this.start(next.key, next.run);
      else if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
  }

  private async lookup(key: string, ip: Ip, suffixes: string[], forward: boolean): Promise<void> {
    let verdict: RdnsVerdict;
    try {
      verdict = await this.judge(ip, suffixes, forward);
    } catch {
      verdict = 'unknown'; // timeout or resolver failure: never an error, tried again soon
    }
    const ttl = verdict === 'unknown' ? this.dnsFailureTtlMs : this.dnsCacheTtlMs;
    this.rdnsCache.set(key, { verdict, expires: this.opts.now() + ttl });
  }

  private async judge(ip: Ip, suffixes: string[], forward: boolean): Promise<RdnsVerdict> {
    const names = (await withTimeout(this.resolver.reverse(ip.address), this.dnsTimeoutMs)).map(hostName);
    const candidates = names.filter((h) => suffixes.some((s) => endsWithDomain(h, s))).slice(0, 3);
    if (candidates.length === 0) return 'spoofed';
    if (!forward) return 'verified';
    for (const host of candidates) {
      const addrs = await withTimeout(this.resolver.resolve(host), this.dnsTimeoutMs);
      if (addrs.some((a) => normalizeIp(a)?.address === ip.address)) return 'verified';
    }
    return 'spoofed';
  }
}
