// GET /v1/events: event search over the index of server/store/eventIndex.ts.
// One filter drives: its `_id` ranges are read newest first (or oldest
// first), merged by ULID, and every other filter is checked on the entries
// themselves; only the matching events are read (point reads by requestId).
// A request examines at most SEARCH_SCAN_MAX entries; the opaque
// paginationKey is the ULID of the last entry examined.
import ipaddr from 'ipaddr.js';
import { encodeTime } from 'ulid';
import type { z } from 'zod';
import { parseIpFilter, SEARCH_SCAN_MAX, type EventSearchQuerySchema, type FullEventSchema } from '../../contract/events.js';
import { ApiError } from '../errors.js';
import type { EventsService } from '../events/service.js';
import { factsOf, IP_LEVELS, ipBytes, ipPrefixes, linkedKey, networkHex, ulidOf, type EntryFacts, type IndexEntry } from '../store/eventIndex.js';
import type { EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { VisitorAliases } from '../visitors/aliases.js';

type Query = z.output<typeof EventSearchQuerySchema>;
type FullEvent = z.infer<typeof FullEventSchema>;

/** Sub-ranges an IP filter may be split into before the coarser level and a check on each entry is used instead. */
const MAX_IP_RANGES = 16;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KEY_VERSION = 'e1';

export function encodePaginationKey(ulid: string): string {
  return Buffer.from(`${KEY_VERSION}.${ulid}`).toString('base64url');
}

export function decodePaginationKey(key: string): string {
  const text = /^[A-Za-z0-9_-]+$/.test(key) ? Buffer.from(key, 'base64url').toString() : '';
  const [version, ulid] = text.split('.');
  if (version !== KEY_VERSION || !ulid || !ULID.test(ulid)) throw new ApiError('validation_failed', 'paginationKey: not a key this endpoint returned');
  return ulid;
}

interface Plan {
  /** `<kind>[|<key>]` prefixes (without the account) of the ranges to read. */
  prefixes: string[];
  /** Checks of the filters the ranges do not decide. */
  keep: (e: IndexEntry) => boolean;
}

/**
 * The filters checked on facts that entries carry since they were added
 * (verdicts, suspectScore, country): true or false when the facts decide,
 * undefined when an older entry lacks them (its event is checked once read).
 */
export function factFilter(q: Query): ((f: EntryFacts) => boolean | undefined) | null {
  const checks: ((f: EntryFacts) => boolean | undefined)[] = [];
  const flag = (want: boolean | undefined, get: (f: EntryFacts) => boolean | undefined) => {
    if (want !== undefined) checks.push((f) => (get(f) === undefined ? undefined : get(f) === want));
  };
  flag(q.proxy, (f) => f.px);
  flag(q.incognito, (f) => f.ic);
  flag(q.tampering, (f) => f.tm);
  flag(q.virtualMachine, (f) => f.vm);
  flag(q.devtools, (f) => f.dt);
  flag(q.ipBlocklist, (f) => f.bl);
  const min = q.minSuspectScore;
  if (min !== undefined) checks.push((f) => (f.ss === undefined ? undefined : f.ss >= min));
  // An event with no bot info is no bot of any category; entries written before bot info was recorded lack `b`'s detail too.
  const bot = (want: string | undefined, get: (f: EntryFacts) => string | undefined) => {
    if (want !== undefined) checks.push((f) => (get(f) === undefined ? (f.b === 'none' ? false : undefined) : get(f) === want));
  };
  bot(q.botCategory, (f) => f.bc);
  bot(q.botIdentity, (f) => f.bi);
  const country = q.country?.toUpperCase();
  if (country !== undefined) checks.push((f) => (f.c === undefined ? undefined : f.c === country));
  // An entry names a decision other than allow, its rules and its label only when there are any (store/eventIndex.ts).
  if (q.decision !== undefined) checks.push((f) => (f.da ?? 'allow') === q.decision);
  if (q.rule !== undefined) checks.push((f) => f.dr === q.rule);
  if (q.testRule !== undefined) checks.push((f) => f.dq?.includes(q.testRule!) === true);
  const label = q.label === 'none' ? '' : q.label;
  if (label !== undefined) checks.push((f) => (f.lb ?? '') === label);
  if (checks.length === 0) return null;
  return (f) => {
    let unknown = false;
    for (const check of checks) {
      const r = check(f);
      if (r === false) return false;
      if (r === undefined) unknown = true;
    }
    return unknown ? undefined : true;
  };
}

/** The ranges an IP or CIDR filter reads, and the check of the entries when a coarser level is read. */
export function ipPlan(filter: string): { prefixes: string[]; contains: ((ip: string) => boolean) | null } {
  const parsed = parseIpFilter(filter);
  const ip = parsed ? ipBytes(parsed.address) : null;
  if (!parsed || !ip) throw new ApiError('validation_failed', 'ip: must be an IP address or a CIDR (203.0.113.0/24, 2001:db8::/48)');
  const total = ip.bytes.length * 8;
  let bits = parsed.bits ?? total;
  // An IPv4-mapped IPv6 address is searched as the IPv4 address it carries.
  if (ip.version === 4 && parsed.address.includes(':')) bits = parsed.bits === null ? 32 : parsed.bits - 96;
  if (bits < 0 || bits > total) throw new ApiError('validation_failed', 'ip: prefix length out of range');
  const levels = [...IP_LEVELS[ip.version]].sort((a, b) => a - b);
  const finer = levels.find((l) => l >= bits)!;
  const spread = finer - bits;
  if (2 ** spread <= MAX_IP_RANGES) {
    // The network's first `bits` bits, then each of its 2^spread sub-prefixes of `finer` bits.
    let big = 0n;
    for (const b of ip.bytes) big = (big << 8n) | BigInt(b);
    const first = (big >> BigInt(total - bits)) << BigInt(spread);
    const prefixes: string[] = [];
    for (let k = 0n; k < 1n << BigInt(spread); k++) prefixes.push(`i${ip.version}_${finer}|${(first | k).toString(16).padStart(finer / 4, '0')}`);
    return { prefixes, contains: null };
  }
  const coarser = [...levels].reverse().find((l) => l <= bits);
  if (coarser === undefined)
    throw new ApiError('validation_failed', `ip: CIDR too wide (at least /${levels[0]! - Math.log2(MAX_IP_RANGES)} for IPv${ip.version})`);
  const net = ipaddr.fromByteArray(ip.bytes);
  const contains = (address: string) => {
    try {
      const a = ipaddr.process(address);
      return a.kind() === net.kind() && a.match(net, bits);
    } catch {
      return false;
    }
  };
  return { prefixes: [`i${ip.version}_${coarser}|${networkHex(ip.bytes, coarser)}`], contains };
}

export class EventSearchService {
  constructor(
    private readonly store: Store,
    private readonly aliases: VisitorAliases,
    private readonly events: EventsService,
  ) {}

  /**
   * `projectId` narrows the search to one project's events (the dashboard's
   * explorer): a check on the entries, which record their project.
   */
  async search(accountId: string, q: Query, projectId?: string): Promise<{ events: FullEvent[]; paginationKey?: string }> {
    if (q.start !== undefined && q.end !== undefined && q.start > q.end) throw new ApiError('validation_failed', 'start: must not be after end');
    const cursor = q.paginationKey === undefined ? null : decodePaginationKey(q.paginationKey);
    const plan = await this.plan(accountId, q, projectId);
    if (!plan) return { events: [] };
    const order = q.reverse ? 'asc' : 'desc';
    // Time bounds on the ULID part: a 10-character time prefix sorts before every ULID of that millisecond.
    let lo = q.start === undefined ? '' : encodeTime(q.start, 10);
    let hi = q.end === undefined ? '~' : encodeTime(Math.min(q.end + 1, 2 ** 48 - 1), 10);
    if (cursor !== null && order === 'desc' && cursor < hi) hi = cursor;
    if (cursor !== null && order === 'asc' && cursor > lo) lo = cursor;

    const matches: string[] = [];
    let scanned = 0;
    let next: string | null = null;
    for (;;) {
      const batch = Math.min(SEARCH_SCAN_MAX - scanned, Math.max(2 * q.limit, 100));
      const lists = await Promise.all(plan.prefixes.map((p) => this.store.eventIndex.range(`${accountId}|${p}`, lo, hi, order, batch)));
      const exhausted = lists.every((l) => l.length < batch);
      const merged = lists
        .flat()
        .sort((a, b) => (ulidOf(a.r) < ulidOf(b.r) ? 1 : -1) * (order === 'desc' ? 1 : -1))
        .slice(0, batch);
      let stoppedAt = -1;
      for (let i = 0; i < merged.length; i++) {
        const e = merged[i]!;
        scanned++;
        if (plan.keep(e) && !matches.includes(e.r)) matches.push(e.r);
        if (matches.length === q.limit) {
          stoppedAt = i;
          break;
        }
      }
      const last = merged[stoppedAt >= 0 ? stoppedAt : merged.length - 1];
      const more = stoppedAt >= 0 ? stoppedAt < merged.length - 1 || !exhausted : !exhausted || merged.length === batch;
      if (!last || !more) break;
      const u = ulidOf(last.r);
      if (order === 'desc') hi = u;
      else lo = u;
      if (stoppedAt >= 0 || scanned >= SEARCH_SCAN_MAX) {
        next = u;
        break;
      }
    }

    const docs = await Promise.all(matches.map((id) => this.store.events.get(id)));
    // Entries older than the verdict facts pass the entry check; their events are checked here.
    const facts = factFilter(q);
    const events = await this.events.full(
      accountId,
      docs.filter(
        (d): d is EventDoc =>
          d !== null && d.accountId === accountId && (projectId === undefined || d.projectId === projectId) && (facts === null || facts(factsOf(d)) === true),
      ),
    );
    return { events, ...(next !== null ? { paginationKey: encodePaginationKey(next) } : {}) };
  }

  /** The driving ranges and the checks of the other filters; null when nothing can match (an unknown visitor). */
  private async plan(accountId: string, q: Query, projectId: string | undefined): Promise<Plan | null> {
    const checks: ((e: IndexEntry) => boolean)[] = [];
    // Entries written before they recorded their project pass here; their events are checked once read.
    if (projectId !== undefined) checks.push((e) => e.p === undefined || e.p === projectId);
    let prefixes: string[] | null = null;

    let visitors: Set<string> | null = null;
    if (q.visitorId !== undefined) {
      const survivor = await this.aliases.survivor(accountId, q.visitorId);
      if (!survivor) return null;
      const aliases = await this.aliases.aliasesOf(survivor);
      visitors = new Set([survivor._id, ...aliases.map((a) => a._id)]);
    }
    if (q.linkedId !== undefined) {
      const l = linkedKey(q.linkedId);
      prefixes = [`l|${l}`];
      if (visitors) {
        const vs = visitors;
        checks.push((e) => vs.has(e.v));
      }
    } else if (visitors) {
      prefixes = [...visitors].map((v) => `v|${v}`);
    }
    if (q.highRecallVisitorId !== undefined) {
      // The group's first visitor (and its aliases): its own events, and those answered its id.
      const survivor = await this.aliases.survivor(accountId, q.highRecallVisitorId);
      if (!survivor) return null;
      const group = new Set([survivor._id, ...(await this.aliases.aliasesOf(survivor)).map((a) => a._id)]);
      // An event answered its visitor's own id unless its entry names another.
      checks.push((e) => group.has(e.h ?? e.v));
      if (prefixes === null) prefixes = [...group].flatMap((v) => [`v|${v}`, `h|${v}`]);
    }
    if (q.ip !== undefined) {
      const ip = ipPlan(q.ip);
      if (prefixes === null && ip.prefixes.length) {
        prefixes = ip.prefixes;
        if (ip.contains) checks.push((e) => ip.contains!(e.ip));
      } else {
        const wanted = new Set(ip.prefixes);
        const check = ip.contains ?? ((address: string) => ipPrefixes(address).some((p) => wanted.has(p)));
        checks.push((e) => check(e.ip));
      }
    }
    const drive = (prefix: string[], check: (e: IndexEntry) => boolean) => {
      if (prefixes === null) prefixes = prefix;
      else checks.push(check);
    };
    if (q.suspect === true) drive(['s'], (e) => e.f.s);
    if (q.tor === true) drive(['t'], (e) => e.f.t);
    if (q.bot === 'bad' || q.bot === 'good') {
      const b = q.bot;
      drive([`b|${b}`], (e) => e.f.b === b);
    }
    if (q.bot === 'all') drive(['b|good', 'b|bad'], (e) => e.f.b !== 'none');
    if (q.vpn === true) drive(['n'], (e) => e.f.n);
    if (q.suspect === false) checks.push((e) => !e.f.s);
    if (q.tor === false) checks.push((e) => !e.f.t);
    if (q.vpn === false) checks.push((e) => !e.f.n);
    if (q.bot === 'none') checks.push((e) => e.f.b === 'none');
    const facts = factFilter(q);
    if (facts) checks.push((e) => facts(e.f) !== false);
    return { prefixes: prefixes ?? ['a'], keep: (e) => checks.every((c) => c(e)) };
  }
}
