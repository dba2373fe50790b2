// One document per visitor (`_id` = iq_<ulid>): what identification keeps of
// a device (server/identification/linker.ts VisitorRecord: its last two
// component sets, the prefixes and ASes it used, its device tokens, the
// suspects of a young visitor), its counters, recent activity for velocity,
// and merges: a visitor merged into another keeps its document and its visit
// pages, `mergedInto` names the survivor, and the survivor lists it in
// `mergedFrom` and counts its visits in `mergedVisits`.
//
// The visitor also holds its newest visit summaries (the current page of
// server/store/visits.ts), so that recording a visit is one write; a page
// moves to `visitPages` when the next one starts. Every write bumps `rev`,
// and a visit is recorded by a compare-and-swap on it: the visit's sequence
// number and its summary are decided from the document read, and nothing a
// concurrent writer did is overwritten (exact across processes on MongoDB;
// on FerretDB, whose updates are read-modify-write, exact within a process,
// where the per-visitor lock serialises the writes).
import type { Collection, Db } from 'mongodb';
import type { Components } from '../identification/components.js';
import type { AsnUse, PrefixUse } from '../identification/evidence.js';
import type { Match, Suspect, TokenUse, Visit, VisitorRecord } from '../identification/linker.js';
import { mergeRecords, recordVisit, unmergeRecords } from '../identification/record.js';
import { KeyedLock } from './keyedLock.js';
import { pageOf, type StoredVisit, type VisitsRepo } from './visits.js';

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
  components: Components[];
  prefixes?: PrefixUse[];
  asns?: AsnUse[];
  novelPrefixes?: number;
  novelAsns?: number;
  webkit?: boolean;
  tokens?: TokenUse[];
  suspects?: Suspect[];
  residual?: number | null;
  mergedInto?: string | null;
  mergedFrom?: string[];
  /** Events of the last 24 hours, oldest first (expired entries may linger; readers filter by time). */
  recent: RecentActivity[];
  /** The newest visits (the current page); older pages are in `visitPages`. */
  visits?: StoredVisit[];
  /** Bumped by every write: the compare-and-swap of recordVisit (absent on documents written before it). */
  rev?: number | null;
}

/**
 * Activity kept per visitor for velocity: the last 24 hours, at most this many
 * events (beyond it the 24-hour counts saturate; highActivity fires long before).
 */
export const RECENT_CAP = 5_000;

/** Attempts at recording a visit before giving up on a visitor that keeps changing. */
const CAS_ATTEMPTS = 8;

/** The facts of a visit being recorded, from which the caller builds its summary. */
export interface VisitFacts {
  /** Visits of the device (this visitor's and its merged visitors'), this one included. */
  visitCount: number;
  firstSeenAt: number;
  previousSeenAt: number;
  recent: RecentActivity[];
  seq: number;
}

export interface VisitRecorded extends VisitFacts {
  /** The visitor before the visit, as identification sees it. */
  before: VisitorRecord;
}

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

/** The visitor as identification sees it. */
export function toRecord(d: VisitorDoc): VisitorRecord {
  return {
    id: d._id,
    components: Array.isArray(d.components) ? d.components : [d.components],
    visitCount: d.visitCount + (d.mergedVisits ?? 0),
    firstSeenAt: d.firstSeenAt,
    lastSeenAt: d.lastSeenAt,
    prefixes: d.prefixes ?? [],
    asns: d.asns ?? [],
    novelPrefixes: d.novelPrefixes ?? 0,
    novelAsns: d.novelAsns ?? 0,
    webkit: d.webkit ?? false,
    tokens: d.tokens ?? [],
    suspects: d.suspects ?? [],
    residual: d.residual ?? null,
    mergedInto: d.mergedInto ?? null,
  };
}

/** Fields a visit, a merge or its undoing rewrite (identification's state, not the counters). */
const stateOf = (r: VisitorRecord) => ({
  components: r.components,
  prefixes: r.prefixes,
  asns: r.asns,
  novelPrefixes: r.novelPrefixes,
  novelAsns: r.novelAsns,
  webkit: r.webkit,
  tokens: r.tokens,
  suspects: r.suspects,
  residual: r.residual,
});

export class VisitorsRepo {
  private readonly col: Collection<VisitorDoc>;
  private readonly lock = new KeyedLock();

  constructor(
    db: Db,
    private readonly pages: VisitsRepo,
  ) {
    this.col = db.collection('visitors');
  }

  async get(visitorId: string): Promise<VisitorDoc | null> {
    return this.col.findOne({ _id: visitorId });
  }

  /** Several visitors in one read (absent ones are missing from the map). */
  async getMany(visitorIds: readonly string[]): Promise<Map<string, VisitorDoc>> {
    const ids = [...new Set(visitorIds)];
    const docs = ids.length === 1 ? [await this.get(ids[0]!)].filter((d): d is VisitorDoc => d !== null) : await this.col.find({ _id: { $in: ids } }).toArray();
    return new Map(docs.map((d) => [d._id, d]));
  }

  /** Creates a visitor with no visits yet; recordVisit counts the first. */
  async create(doc: VisitorDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /** Removes a visitor that lost the race for its token (it has no visits). */
  async delete(visitorId: string): Promise<void> {
    await this.col.deleteOne({ _id: visitorId, visitCount: 0 });
  }

  /**
   * Counts one more visit, stores what identification learnt from it and the
   * visit's summary (`summarize`, called with the visit's facts, again if the
   * visitor changed meanwhile and the visit is decided afresh). `prior` is the
   * document as linking read it: reused when nothing wrote the visitor since,
   * which the compare-and-swap on `rev` checks. Filters name `_id` first, the
   * field the dev database's patched FerretDB finds by index.
   */
  recordVisit(
    match: Match,
    visit: Visit,
    activity: RecentActivity,
    windowMs: number,
    prior: VisitorDoc | null,
    summarize: (facts: VisitFacts) => StoredVisit,
  ): Promise<VisitRecorded> {
    const visitorId = match.visitorId;
    return this.lock.run(visitorId, async () => {
      let before = prior ?? (await this.get(visitorId));
      for (let attempt = 1; before; attempt++) {
        const done = await this.record(before, match, visit, activity, windowMs, summarize);
        if (done) return done;
        if (attempt === CAS_ATTEMPTS) throw new Error(`visitor ${visitorId} kept changing while a visit was recorded`);
        before = await this.get(visitorId);
      }
      throw new Error(`visitor ${visitorId} disappeared`);
    });
  }

  /** One compare-and-swap attempt; null when the visitor changed since `before` was read. */
  private async record(
    before: VisitorDoc,
    match: Match,
    visit: Visit,
    activity: RecentActivity,
    windowMs: number,
    summarize: (facts: VisitFacts) => StoredVisit,
  ): Promise<VisitRecorded | null> {
    const next = recordVisit(toRecord(before), match, visit);
    const first = before.visitCount === 0;
    const kept = before.recent.filter((r) => r.t > visit.now - windowMs);
    const recent = [...kept.slice(Math.max(0, kept.length + 1 - RECENT_CAP)), activity];
    const seq = before.visitCount + 1;
    const facts: VisitFacts = {
      visitCount: seq + (before.mergedVisits ?? 0),
      firstSeenAt: first ? visit.now : before.firstSeenAt,
      previousSeenAt: first ? visit.now : before.lastSeenAt,
      recent,
      seq,
    };
    const summary = summarize(facts);
    // A new page starts: the finished one moves to visitPages first (idempotent), so a failure loses nothing.
    const page = pageOf(seq);
    const embedded = before.visits ?? [];
    const finished = embedded.filter((v) => pageOf(v.seq) < page);
    if (finished.length) await this.pages.keep(before._id, finished);
    // Rewritten whole when enough has expired (or it overflows); otherwise appended, and expired entries wait.
    const rewrite = before.recent.length + 1 > RECENT_CAP || before.recent.length - kept.length > Math.max(8, before.recent.length / 8);
    const set = {
      ...stateOf(next),
      lastSeenAt: visit.now,
      ...(first ? { firstSeenAt: visit.now } : {}),
      visits: [...embedded.filter((v) => pageOf(v.seq) === page), summary],
      ...(rewrite ? { recent } : {}),
    };
    // An update, not findAndModify: the document it would return is `before` plus this visit (every
    // other writer bumps rev, so a match means nothing else changed), and not encoding it back saves the database work.
    const done = await this.col.updateOne(
      { _id: before._id, rev: before.rev ?? null },
      { $set: set, $inc: { visitCount: 1, rev: 1 }, ...(rewrite ? {} : { $push: { recent: activity } }) },
    );
    if (done.matchedCount === 0) return null;
    // A visit recorded on a visitor merged away meanwhile is counted on the survivor too.
    if (before.mergedInto) await this.col.updateOne({ _id: before.mergedInto }, { $inc: { mergedVisits: 1, rev: 1 } });
    return { ...facts, before: toRecord(before) };
  }

  /** Drops the visitor's embedded visit summaries older than `cutoff` (retention). */
  dropVisitsOlderThan(visitorId: string, cutoff: number): Promise<void> {
    return this.lock.run(visitorId, async () => {
      for (let attempt = 1; attempt <= CAS_ATTEMPTS; attempt++) {
        const doc = await this.get(visitorId);
        const visits = doc?.visits ?? [];
        if (!doc || !visits.some((v) => v.timestamp < cutoff)) return;
        const done = await this.col.updateOne(
          { _id: visitorId, rev: doc.rev ?? null },
          { $set: { visits: visits.filter((v) => v.timestamp >= cutoff) }, $inc: { rev: 1 } },
        );
        if (done.matchedCount === 1) return;
      }
    });
  }

  /**
   * `from` becomes an alias of `into` (after the caller won the merge claim):
   * the survivor takes its networks, tokens and visit count; visitors merged
   * into `from` earlier now point at `into` directly. Idempotent: the
   * survivor's update applies only while `from` is not yet in its mergedFrom.
   */
  async merge(from: string, into: string): Promise<VisitorRecord | null> {
    return this.lock.run(into, async () => {
      const [a, b] = await Promise.all([this.get(from), this.get(into)]);
      if (!a || !b || b.mergedInto) return null;
      const { from: merged, into: survivor } = mergeRecords(toRecord(a), toRecord(b), []);
      const aliases = a.mergedFrom ?? [];
      await this.col.updateOne(
        { _id: into, mergedFrom: { $ne: from } },
        {
          $set: { ...stateOf(survivor), firstSeenAt: survivor.firstSeenAt, lastSeenAt: survivor.lastSeenAt },
          $inc: { mergedVisits: a.visitCount + (a.mergedVisits ?? 0), rev: 1 },
          $addToSet: { mergedFrom: { $each: [from, ...aliases] } },
        },
      );
      await Promise.all([
        this.col.updateOne({ _id: from }, { $set: { mergedInto: into, suspects: [], residual: null }, $inc: { rev: 1 } }),
        ...aliases.map((id) => this.col.updateOne({ _id: id }, { $set: { mergedInto: into }, $inc: { rev: 1 } })),
      ]);
      return merged;
    });
  }

  /** Undoes merge(from, into) as far as it can: `from` and its tokens stand alone again. */
  async unmerge(from: string, into: string): Promise<VisitorRecord | null> {
    return this.lock.run(into, async () => {
      const [a, b] = await Promise.all([this.get(from), this.get(into)]);
      if (!a || !b || a.mergedInto !== into) return null;
      const { from: restored, into: survivor } = unmergeRecords(toRecord(a), toRecord(b));
      await this.col.updateOne(
        { _id: into },
        { $set: { tokens: survivor.tokens }, $inc: { mergedVisits: -(a.visitCount + (a.mergedVisits ?? 0)), rev: 1 }, $pull: { mergedFrom: from } },
      );
      await this.col.updateOne({ _id: from }, { $set: { mergedInto: null, suspects: [], residual: null, tokens: restored.tokens }, $inc: { rev: 1 } });
      return restored;
    });
  }
}
