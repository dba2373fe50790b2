// One document per visitor (`_id` = iq_<ulid>): what identification keeps of
// a device (its last two component sets, the prefixes and ASes it used, its
// device tokens, the suspects of a young visitor), its counters, recent
// activity for velocity, and merges: a visitor merged into another keeps its
// document and its visit pages, `mergedInto` names the survivor, and the
// survivor lists it in `mergedFrom` and counts its visits in `mergedVisits`.
// Identification (server/identification/) decides what these fields hold;
// this module only stores them.
//
// Stored compactly (encodeVisitor below): lists of small objects as JSON
// text.
//
// The visitor also holds its newest visit summaries (the current page of
// server/store/visits.ts), so that recording a visit is one write; a page
// moves to `visitPages` when the next one starts. Every write bumps `rev`,
// and writers update by a compare-and-swap on it (`update`): a caller
// computes the next document from the one it read, and the write holds only
// if nothing changed since, else the caller reads again and recomputes
// (exact across processes on MongoDB; on FerretDB, whose updates are
// read-modify-write, exact within a process, where the per-visitor lock
// serialises the writes).
import type { Collection, Db, UpdateFilter } from 'mongodb';
import { KeyedLock } from './keyedLock.js';
import { type StoredVisit, type VisitsRepo } from './visits.js';

/** A device's components as stored: name → value hash (server/identification/components.ts names them). */
export type ComponentSet = Partial<Record<string, string>>;

export interface TokenUse {
  hash: string;
  first: number;
  last: number;
  /** The visitor the token came with when that visitor was merged into this one. */
  via?: string;
  /** Only ever seen in a private window: storage that dies with the window, never kept by the device. */
  ephemeral?: true;
  /** The first-party proxy's device cookie: set by the server, it outlives WebKit's deletion of script storage. */
  cookie?: true;
  /** A device cookie set on a visit and never presented since. */
  issued?: true;
  /** Such a cookie, and a later proxied visit came without it: the browser does not keep the cookies it is given. */
  unreturned?: true;
}

/** A young visitor's possible predecessor and the evidence for it so far. */
export interface Suspect {
  id: string;
  /** The log-odds the decision gave it when the young visitor was created. */
  logOdds: number;
  /** The network evidence of the young visitor's later visits for it, summed (log-odds). */
  net: number;
  /** When the young visitor appeared: the suspect must not be seen with its own tokens after it. */
  since: number;
}

export interface PrefixUse {
  p: string;
  /** Visits from it. */
  n: number;
  last: number;
}

export interface AsnUse {
  a: number;
  n: number;
  last: number;
}

export interface RecentActivity {
  t: number;
  ip: string;
  country: string;
}

export interface VisitorDoc {
  _id: string;
  accountId: string;
  firstSeenAt: number;
  lastSeenAt: number;
  /** Visits recorded on this visitor (its visit pages go up to this sequence number). */
  visitCount: number;
  /** Visits of the visitors merged into this one. */
  mergedVisits?: number;
  /** The last component sets, newest first. */
  components: ComponentSet[];
  prefixes?: PrefixUse[];
  asns?: AsnUse[];
  novelPrefixes?: number;
  novelAsns?: number;
  webkit?: boolean;
  tokens?: TokenUse[];
  /** Hashes of the customer's linkedIds the visitor was seen with, newest first (linker.ts LINKED_CAP). */
  linked?: string[];
  suspects?: Suspect[];
  residual?: number | null;
  mergedInto?: string | null;
  mergedFrom?: string[];
  /** The high-recall group it joined (linker.ts HIGH_RECALL_BORN_P): its first visitor's id; absent: its own. */
  highRecall?: string;
  /** Events of the last 24 hours, oldest first (expired entries may linger; readers filter by time). */
  recent: RecentActivity[];
  /** The newest visits (the current page); older pages are in `visitPages`. */
  visits?: StoredVisit[];
  /** Bumped by every write: the compare-and-swap of `update` (absent on documents written before it). */
  rev?: number | null;
}

// How a visitor document is stored: its many small objects (component sets,
// networks, tokens, suspects, recent activity, the current page of visit
// summaries) as JSON text, one string per list or per list item, so that
// the document has about 40 fields instead of about 400. Every visit
// rewrites the visitor, and a database that re-encodes whole documents on
// update (FerretDB: decode, apply, encode, write) pays per field: measured
// on the SQLite backend, a visitor's compare-and-swap went from 2.07 to
// 0.81 ms of the database's CPU (issue 27). Lists that grow at their end
// (recent activity, visit summaries) stay lists of strings, so a visit
// appends one string instead of rewriting them. Nothing queries inside
// these fields: a visitor is found by `_id` (server/store/identity.ts
// indexes what linking looks up).
//
// Recent activity and visit summaries are stored as arrays of their values
// (POSITIONAL). Documents written before this form hold objects; reads
// accept both, item by item, and a write stores what it changes in the new
// form.

type Text<T> = T | string;

/** The document as the collection holds it. */
export interface StoredVisitorDoc extends Omit<VisitorDoc, 'components' | 'prefixes' | 'asns' | 'tokens' | 'suspects' | 'recent' | 'visits'> {
  components: Text<ComponentSet>[];
  prefixes?: Text<PrefixUse[]>;
  asns?: Text<AsnUse[]>;
  tokens?: Text<TokenUse[]>;
  suspects?: Text<Suspect[]>;
  recent: Text<RecentActivity>[];
  visits?: Text<StoredVisit>[];
}

/** Lists stored as one text each (rewritten whole when they change). */
const WHOLE = ['prefixes', 'asns', 'tokens', 'suspects'] as const;
/** Lists stored as a list of texts (appended to as they grow). */
const ITEMWISE = ['components', 'recent', 'visits'] as const;
/**
 * Items stored as a JSON array of their values in this order (a visit
 * summary in about 140 bytes instead of 230): only an item with exactly
 * these fields, all present; any other keeps its names. New fields go at
 * the end, where older texts simply lack them.
 */
const POSITIONAL: Partial<Record<(typeof ITEMWISE)[number], readonly string[]>> = {
  recent: ['t', 'ip', 'country'] satisfies (keyof RecentActivity)[],
  visits: [
    'seq',
    'requestId',
    'id',
    'timestamp',
    'country',
    'city',
    'region',
    'asn',
    'asnOrg',
    'asnCategory',
    'botProbability',
    'confidence',
    'riskFactors',
  ] satisfies (keyof StoredVisit)[],
};

const text = (x: unknown): unknown => (x === null || typeof x === 'string' ? x : JSON.stringify(x));
const parsed = (x: unknown): unknown => (typeof x === 'string' ? JSON.parse(x) : x);

function itemText(x: unknown, fields: readonly string[] | undefined): unknown {
  if (!fields || x === null || typeof x !== 'object') return text(x);
  const o = x as Record<string, unknown>;
  const keys = Object.keys(o);
  const exact = keys.length === fields.length && fields.every((f) => o[f] !== undefined);
  return JSON.stringify(exact ? fields.map((f) => o[f]) : o);
}

function itemParsed(x: unknown, fields: readonly string[] | undefined): unknown {
  const v = parsed(x);
  if (!fields || !Array.isArray(v)) return v;
  const o: Record<string, unknown> = {};
  fields.forEach((f, i) => {
    if (i < v.length) o[f] = v[i];
  });
  return o;
}

function convert<T extends object>(doc: object, whole: (x: unknown) => unknown, item: (x: unknown, fields: readonly string[] | undefined) => unknown): T {
  const out: Record<string, unknown> = { ...doc };
  for (const k of WHOLE) if (out[k] !== undefined) out[k] = whole(out[k]);
  for (const k of ITEMWISE) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((x) => item(x, POSITIONAL[k]));
  return out as T;
}

export const encodeVisitor = (doc: VisitorDoc): StoredVisitorDoc => convert(doc, text, itemText);
export const decodeVisitor = (stored: StoredVisitorDoc): VisitorDoc => convert(stored, parsed, itemParsed);

/** Attempts at dropping expired summaries of a visitor that keeps changing (the next sweep tries again). */
const RETENTION_ATTEMPTS = 8;

/** Links followed through merges at most: merges are flattened, so one hop; a few for safety. */
export const MERGE_HOPS = 4;

/**
 * Follows `mergedInto` from `id` to the visitor that survives; null when the
 * id is unknown or the chain is longer than MERGE_HOPS. The one walk every
 * reader takes: linking (over its index) and the read side (over the store).
 */
export async function followMerges<T extends { mergedInto?: string | null }>(id: string, read: (id: string) => Promise<T | null>): Promise<T | null> {
  let v = await read(id);
  for (let hops = 0; v?.mergedInto && hops < MERGE_HOPS; hops++) v = await read(v.mergedInto);
  return v && !v.mergedInto ? v : null;
}

export class VisitorsRepo {
  private readonly col: Collection<StoredVisitorDoc>;
  private readonly lock = new KeyedLock();

  constructor(
    db: Db,
    private readonly pages: VisitsRepo,
  ) {
    this.col = db.collection('visitors');
  }

  async get(visitorId: string): Promise<VisitorDoc | null> {
    const stored = await this.col.findOne({ _id: visitorId });
    return stored && decodeVisitor(stored);
  }

  /** Several visitors in one read (absent ones are missing from the map). */
  async getMany(visitorIds: readonly string[]): Promise<Map<string, VisitorDoc>> {
    const ids = [...new Set(visitorIds)];
    const docs =
      ids.length === 1
        ? [await this.get(ids[0]!)].filter((d): d is VisitorDoc => d !== null)
        : (await this.col.find({ _id: { $in: ids } }).toArray()).map(decodeVisitor);
    return new Map(docs.map((d) => [d._id, d]));
  }

  /** Creates a visitor with no visits yet; the first is recorded like any other. */
  async create(doc: VisitorDoc): Promise<void> {
    await this.col.insertOne(encodeVisitor(doc));
  }

  /** Removes a visitor that lost the race for its token (with no visits, or its first visit that is recorded again on the winner). */
  async delete(visitorId: string, visits = 0): Promise<void> {
    await this.col.deleteOne({ _id: visitorId, visitCount: visits });
  }

  /**
   * Writes `next` over `prior` if the visitor is still as `prior` was read
   * (its `rev`); false when another write came first, and the caller decides
   * again from a fresh read. Fields are compared in their stored form:
   * unchanged ones are not sent, and a list that only grew at its end is
   * appended to rather than rewritten (recent activity, visit summaries). Visit summaries
   * of a finished page that `next` no longer holds move to visitPages first
   * (idempotent), so a failed write loses none of them. Filters name `_id`
   * first, the field the dev database's patched FerretDB finds by index.
   */
  update(prior: VisitorDoc, next: VisitorDoc): Promise<boolean> {
    return this.lock.run(prior._id, async () => {
      const held = new Set((next.visits ?? []).map((v) => v.seq));
      const leaving = (prior.visits ?? []).filter((v) => !held.has(v.seq));
      if (leaving.length) await this.pages.keep(prior._id, leaving);
      const done = await this.col.updateOne({ _id: prior._id, rev: prior.rev ?? null }, changes(encodeVisitor(prior), encodeVisitor(next)));
      return done.matchedCount === 1;
    });
  }

  /** Changes nothing but `rev`: the visitor lost something a cache may vouch for (a token moved to another visitor). */
  async touch(visitorId: string): Promise<void> {
    await this.lock.run(visitorId, () => this.col.updateOne({ _id: visitorId }, { $inc: { rev: 1 } }));
  }

  /** Counts a visit recorded on a visitor merged into `survivorId` (increments commute: no compare-and-swap). */
  async countMergedVisit(survivorId: string): Promise<void> {
    await this.lock.run(survivorId, () => this.col.updateOne({ _id: survivorId }, { $inc: { mergedVisits: 1, rev: 1 } }));
  }

  /** Drops the visitor's embedded visit summaries older than `cutoff` (retention). */
  dropVisitsOlderThan(visitorId: string, cutoff: number): Promise<void> {
    return this.lock.run(visitorId, async () => {
      for (let attempt = 1; attempt <= RETENTION_ATTEMPTS; attempt++) {
        const doc = await this.get(visitorId);
        const visits = doc?.visits ?? [];
        if (!doc || !visits.some((v) => v.timestamp < cutoff)) return;
        const kept = encodeVisitor({ ...doc, visits: visits.filter((v) => v.timestamp >= cutoff) }).visits;
        const done = await this.col.updateOne({ _id: visitorId, rev: doc.rev ?? null }, { $set: { visits: kept }, $inc: { rev: 1 } });
        if (done.matchedCount === 1) return;
      }
    });
  }
}

/** The update that turns `prior` into `next` (both as stored), plus the rev bump. */
function changes(prior: StoredVisitorDoc, next: StoredVisitorDoc): UpdateFilter<StoredVisitorDoc> {
  const $set: Record<string, unknown> = {};
  const $push: Record<string, { $each: unknown[] }> = {};
  const $unset: Record<string, ''> = {};
  for (const key of Object.keys(next) as (keyof StoredVisitorDoc)[]) {
    if (key === '_id' || key === 'rev') continue;
    const [a, b] = [prior[key], next[key]];
    if (a === b) continue;
    if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && a.every((x, i) => x === b[i])) $push[key] = { $each: b.slice(a.length) };
    else if (b === undefined) $unset[key] = '';
    else $set[key] = b;
  }
  for (const key of Object.keys(prior)) if (!(key in next)) $unset[key] = '';
  return {
    $inc: { rev: 1 },
    ...(Object.keys($set).length ? { $set } : {}),
    ...(Object.keys($push).length ? { $push } : {}),
    ...(Object.keys($unset).length ? { $unset } : {}),
  };
}
