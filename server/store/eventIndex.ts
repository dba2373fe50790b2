// The event search index: small entries keyed by composite `_id`s, stored in
// the events collection beside their event and written with it in ONE
// insertMany (server/store/events.ts, which lists the collection's `_id`
// families), so that every filter of GET /v1/events is a bounded range of
// `_id` (newest first is descending `_id`, because the last part is the
// event's ULID):
//
//   <acc>|a|<ulid>                  every event of the account
//   <acc>|v|<visitorId>|<ulid>      by the visitor identify returned
//   <acc>|h|<highRecallId>|<ulid>   by the high-recall id identify returned, when not the visitor's own
//   <acc>|l|<sha256(linkedId)>|<ulid>
//   <acc>|i4_<len>|<hex>|<ulid>     the client IP's /32, /24, /16 and /8
//   <acc>|i6_<len>|<hex>|<ulid>     … its /128, /64, /48 and /32 for IPv6
//   <acc>|s|<ulid>                  flagged suspect
//   <acc>|t|<ulid>                  Tor exit
//   <acc>|n|<ulid>                  VPN detected
//   <acc>|b|good|<ulid>, <acc>|b|bad|<ulid>   bots
//   <acc>|r|<projectId>|<ruleId>|<ulid>   decided by this live rule (rule hits)
//   <acc>|q|<projectId>|<ruleId>|<ulid>   matched by this test-mode rule
//   <acc>|x|<projectId>|<ruleId>|<ulid>   this rule failed to evaluate (skipped)
//   <acc>|w|<projectId>|<ulid>      sent to review and not labeled yet (the review queue)
//   <acc>|k|<projectId>|<ulid>      labeled by an analyst
//
// Every entry carries the event's filterable facts (`f`, `ip`, and its
// project `p` for the dashboard's per-project explorer), so a search
// drives one range (the most selective filter) and checks the other filters
// on the entries themselves before reading any event. start/end bound the
// ULID part of the range. Webhook outbox entries (`~o|<requestId>`, see
// server/webhooks/) ride in the same insertMany. An account id is
// `acc_<ulid>`, so every entry sorts before every requestId (`req_…`).
//
// Each range is a walk of the `_id` index that reads only the entries
// returned: on MongoDB, and on the dev database's FerretDB through the
// launcher's patch (devdb/ferretdb-pushdown.patch), sort and limit included.
import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';

export type BotKind = 'good' | 'bad' | 'none';

/** The facts of an event every entry carries. */
export interface EntryFacts {
  /** Bot kind. */
  b: BotKind;
  /** VPN detected. */
  n: boolean;
  /** Tor exit. */
  t: boolean;
  /** Flagged suspect. */
  s: boolean;
  // The facts below are checked on the entries of the driving range (no range
  // of their own); entries written before they were recorded lack them, and
  // search checks those events once read.
  /** Proxy verdict. */
  px?: boolean;
  /** Incognito verdict. */
  ic?: boolean;
  /** Tampering verdict. */
  tm?: boolean;
  /** Virtual machine verdict. */
  vm?: boolean;
  /** DevTools verdict. */
  dt?: boolean;
  /** IP blocklist verdict. */
  bl?: boolean;
  /** suspectScore. */
  ss?: number;
  /** The bot's category and identity (verdicts.bot.info), when the event is a bot. */
  bc?: string;
  bi?: string;
  /** Country of the IP location (ISO 3166-1 alpha-2, upper case; empty when unknown). */
  c?: string;
  /**
   * The decision's action (absent: allow), its deciding live rule, the
   * test-mode rules that matched, the analyst's label: each absent when
   * there is none, as on events stored before rules existed (every field
   * is work for FerretDB on each identify's write).
   */
  da?: string;
  dr?: string;
  dq?: string[];
  lb?: string;
}

export interface IndexEntry {
  _id: string;
  /** requestId. */
  r: string;
  /** The client IP (canonical text). */
  ip: string;
  /** The visitor identify returned. */
  v: string;
  /** The high-recall id identify returned, when not `v`. */
  h?: string;
  /** sha256 of the linkedId, when set. */
  l?: string;
  f: EntryFacts;
  /**
   * The event's project (the dashboard's explorer lists one project's
   * events); absent on entries written before it was recorded.
   */
  p?: string;
}

/**
 * A webhook outbox entry (`~o|<requestId>`): the event still has to be
 * handed to its project's webhook endpoints. Written with the search entries.
 */
export interface OutboxEntry {
  _id: string;
  r: string;
  /** accountId, projectId. */
  a: string;
  p: string;
}

export const outboxId = (requestId: string) => `~o|${requestId}`;

/** The collection the entries share with their events (server/store/events.ts). */
export const EVENTS = 'events';

/** What the index needs of an event. */
export interface IndexedEvent {
  _id: string;
  accountId: string;
  /** Recorded on the entries (`p`) when given. */
  projectId?: string;
  visitorId: string;
  /** The high-recall id answered, when not the visitorId. */
  highRecallVisitorId?: string;
  linkedId: string | null;
  ip: string;
  suspect: boolean;
  decision?: { action: string; ruleId?: string; testMatches: string[]; erroredRules?: string[] };
  label?: { verdict: string } | null;
}

/** The ULID of a requestId (`req_<ulid>`). */
export const ulidOf = (requestId: string) => requestId.slice(4);

export const linkedKey = (linkedId: string) => createHash('sha256').update(linkedId).digest('base64url');

/** Prefix lengths the index keeps for each IP version, finest first. */
export const IP_LEVELS = { 4: [32, 24, 16, 8], 6: [128, 64, 48, 32] } as const;

/** The first `len` bits of an address as hex (rounded up to whole hex digits, the rest zero). */
export function networkHex(bytes: number[], len: number): string {
  let big = 0n;
  for (const b of bytes) big = (big << 8n) | BigInt(b);
  const total = bytes.length * 8;
  const masked = (big >> BigInt(total - len)) << BigInt(total - len);
  const hex = masked.toString(16).padStart(total / 4, '0');
  return hex.slice(0, Math.ceil(len / 4));
}

export function ipBytes(address: string): { version: 4 | 6; bytes: number[] } | null {
  try {
    const a = ipaddr.process(address);
    return { version: a.kind() === 'ipv4' ? 4 : 6, bytes: a.toByteArray() };
  } catch {
    return null;
  }
}

/** The `<kind>|<key>` prefixes of an event's IP entries. */
export function ipPrefixes(address: string): string[] {
  const ip = ipBytes(address);
  if (!ip) return [];
  return IP_LEVELS[ip.version].map((len) => `i${ip.version}_${len}|${networkHex(ip.bytes, len)}`);
}

/** The search prefixes (without account and ULID) an event is listed under. */
export function prefixesOf(e: IndexedEvent, f: EntryFacts): string[] {
  const out = ['a', `v|${e.visitorId}`, ...ipPrefixes(e.ip)];
  if (e.highRecallVisitorId !== undefined) out.push(`h|${e.highRecallVisitorId}`);
  if (e.linkedId !== null) out.push(`l|${linkedKey(e.linkedId)}`);
  if (f.s) out.push('s');
  if (f.t) out.push('t');
  if (f.n) out.push('n');
  if (f.b !== 'none') out.push(`b|${f.b}`);
  if (e.projectId !== undefined && e.decision) {
    if (e.decision.ruleId !== undefined) out.push(`r|${e.projectId}|${e.decision.ruleId}`);
    for (const id of e.decision.testMatches) out.push(`q|${e.projectId}|${id}`);
    for (const id of e.decision.erroredRules ?? []) out.push(`x|${e.projectId}|${id}`);
    if (e.decision.action === 'review' && !e.label) out.push(`w|${e.projectId}`);
  }
  if (e.projectId !== undefined && e.label) out.push(`k|${e.projectId}`);
  return out;
}

/** Every id an event's entries can have, whatever its facts: deleting them all is deleting its entries. */
export function entryIdsOf(e: IndexedEvent): string[] {
  const u = ulidOf(e._id);
  const prefixes = [...prefixesOf({ ...e, label: null }, { b: 'good', n: true, t: true, s: true }), 'b|bad'];
  if (e.projectId !== undefined) prefixes.push(`w|${e.projectId}`, `k|${e.projectId}`);
  return [...new Set(prefixes)].map((p) => `${e.accountId}|${p}|${u}`);
}

export function entriesOf(e: IndexedEvent, f: EntryFacts): IndexEntry[] {
  // Entries must sort apart from events and outbox entries (server/store/events.ts).
  if (!e.accountId.startsWith('acc_')) throw new Error(`event ${e._id}: account id ${e.accountId} is not acc_…`);
  const u = ulidOf(e._id);
  const l = e.linkedId === null ? {} : { l: linkedKey(e.linkedId) };
  const project = e.projectId === undefined ? {} : { p: e.projectId };
  const h = e.highRecallVisitorId === undefined ? {} : { h: e.highRecallVisitorId };
  return prefixesOf(e, f).map((p) => ({ _id: `${e.accountId}|${p}|${u}`, r: e._id, ip: e.ip, v: e.visitorId, ...h, ...l, f, ...project }));
}

/**
 * The search kind of a stored event's bot verdict: its `kind` (good only for
 * a bot proven to be who it says); events stored before it was recorded are
 * `bad` when the verdict fired, never good by their User-Agent alone.
 */
export function botKindOf(bot: { result?: unknown; kind?: unknown } | undefined): BotKind {
  if (bot?.kind === 'good' || bot?.kind === 'bad') return bot.kind;
  if (bot?.kind === 'human') return 'none';
  return bot?.result === true ? 'bad' : 'none';
}

/** The filterable facts of a stored event (bot kind as botKindOf). */
export function factsOf(e: {
  verdicts: Record<string, unknown>;
  signalsJson: string;
  suspect: boolean;
  suspectScore: number;
  ipLocation: Record<string, unknown>;
  decision?: { action: string; ruleId?: string; testMatches: string[] };
  label?: { verdict: string } | null;
}): EntryFacts {
  const result = (name: string) => (e.verdicts[name] as { result?: unknown } | undefined)?.result === true;
  const bot = e.verdicts.bot as { result?: unknown; kind?: unknown; info?: { category?: unknown; identity?: unknown } | null } | undefined;
  const country = typeof e.ipLocation.country === 'string' ? e.ipLocation.country.toUpperCase() : '';
  return {
    b: botKindOf(bot),
    ...(typeof bot?.info?.category === 'string' && { bc: bot.info.category }),
    ...(typeof bot?.info?.identity === 'string' && { bi: bot.info.identity }),
    n: result('vpn'),
    t: result('tor'),
    s: e.suspect,
    px: result('proxy'),
    ic: result('incognito'),
    tm: result('tampering'),
    vm: result('virtualMachine'),
    dt: result('devtools'),
    bl: result('ipBlocklist'),
    ss: e.suspectScore,
    c: country,
    ...(e.decision && e.decision.action !== 'allow' && { da: e.decision.action }),
    ...(e.decision?.ruleId !== undefined && { dr: e.decision.ruleId }),
    ...(e.decision?.testMatches.length && { dq: e.decision.testMatches }),
    ...(e.label && { lb: e.label.verdict }),
  };
}

export class EventIndexRepo {
  readonly col: Collection<IndexEntry>;

  constructor(db: Db) {
    this.col = db.collection(EVENTS);
  }

  /** Entries of `prefix` with ULIDs strictly between `lo` and `hi`, counted (rule hits). */
  count(prefix: string, lo: string, hi: string): Promise<number> {
    return this.col.countDocuments({ _id: { $gt: `${prefix}|${lo}`, $lt: `${prefix}|${hi}` } });
  }

  /** Entries of `prefix` with ULIDs strictly between `lo` and `hi` (ULID strings or time bounds), in order. */
  range(prefix: string, lo: string, hi: string, order: 'desc' | 'asc', limit: number): Promise<IndexEntry[]> {
    return this.col
      .find({ _id: { $gt: `${prefix}|${lo}`, $lt: `${prefix}|${hi}` } })
      .sort({ _id: order === 'desc' ? -1 : 1 })
      .limit(limit)
      .toArray();
  }

  /** The event's `a` entry (its facts as indexed), or null. */
  facts(accountId: string, requestId: string): Promise<IndexEntry | null> {
    return this.col.findOne({ _id: `${accountId}|a|${ulidOf(requestId)}` });
  }

  /** Writes entries in one command (identify writes them with the event: EventsRepo.insert). */
  async insert(entries: (IndexEntry | OutboxEntry)[]): Promise<void> {
    if (entries.length) await this.col.insertMany(entries as IndexEntry[], { ordered: false });
  }

  /** Outbox entries of events before `beforeRequestId` (requestIds sort by time), oldest first. */
  async outbox(beforeRequestId: string, limit: number): Promise<OutboxEntry[]> {
    const docs = await this.col
      .find({ _id: { $gt: '~o|', $lt: outboxId(beforeRequestId) } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs as unknown as OutboxEntry[];
  }

  async deleteOutbox(requestIds: string[]): Promise<void> {
    if (requestIds.length) await this.col.bulkWrite(requestIds.map((r) => ({ deleteOne: { filter: { _id: outboxId(r) } } })));
  }

  /** Deletes every entry of these events (one command per 100 events). */
  async deleteFor(events: readonly IndexedEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 100) {
      const ops: AnyBulkWriteOperation<IndexEntry>[] = events
        .slice(i, i + 100)
        .flatMap((e) => entryIdsOf(e).map((_id) => ({ deleteOne: { filter: { _id } } })));
      if (ops.length) await this.col.bulkWrite(ops, { ordered: false });
    }
  }

  /**
   * Re-indexes one event after its suspect flag, linkedId or label changed:
   * the entries of `before` go, those of `after` come, with the facts of
   * the `a` entry (as identify indexed them), the new flag and label.
   */
  async reindex(before: IndexedEvent, after: IndexedEvent): Promise<void> {
    const a = await this.facts(before.accountId, before._id);
    if (!a) return; // indexed before search existed, or being deleted
    const { lb: _label, ...kept } = a.f;
    const f: EntryFacts = { ...kept, s: after.suspect, ...(after.label && { lb: after.label.verdict }) };
    await this.deleteFor([before]);
    await this.insert(entriesOf(after, f));
  }
}
