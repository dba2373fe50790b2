// One document per visitor (`_id` = iq_<ulid>): what identification keeps of
// a device (server/identification/linker.ts VisitorRecord: its last two
// component sets, the prefixes and ASes it used, its device tokens, the
// suspects of a young visitor), its counters, recent activity for velocity,
// and merges: a visitor merged into another keeps its document and its visit
// pages, `mergedInto` names the survivor, and the survivor lists it in
// `mergedFrom` and counts its visits in `mergedVisits`.
import type { Collection, Db } from 'mongodb';
import type { Components } from '../identification/components.js';
import type { AsnUse, PrefixUse } from '../identification/evidence.js';
import type { Match, Suspect, TokenUse, Visit, VisitorRecord } from '../identification/linker.js';
import { mergeRecords, recordVisit, unmergeRecords } from '../identification/record.js';
import { KeyedLock } from './keyedLock.js';

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
  /** Events of the last 24 hours, oldest first. */
  recent: RecentActivity[];
}

/**
 * Activity kept per visitor for velocity: the last 24 hours, at most this many
 * events (beyond it the 24-hour counts saturate; highActivity fires long before).
 */
export const RECENT_CAP = 5_000;

export interface VisitRecorded {
  /** Visits of the device (this visitor's and its merged visitors'). */
  visitCount: number;
  firstSeenAt: number;
  /** lastSeenAt before this visit (equal to now on a first visit). */
  previousSeenAt: number;
  recent: RecentActivity[];
  /** This visit's sequence number among the visitor's own. */
  seq: number;
  /** The visitor before the visit, as identification sees it. */
  before: VisitorRecord;
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

  constructor(db: Db) {
    this.col = db.collection('visitors');
  }

  async get(visitorId: string): Promise<VisitorDoc | null> {
    return this.col.findOne({ _id: visitorId });
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
   * Counts one more visit and stores what identification learnt from it.
   * Each update filters on `_id` alone, the only filter FerretDB's SQLite
   * backend answers without a scan. The counter and the activity list change
   * with atomic operators (exact on MongoDB across processes); the
   * per-visitor lock makes the read-modify-write exact on FerretDB within
   * the process. A visit recorded on a visitor merged away meanwhile (a merge
   * racing with the visit) is counted on the survivor too. It reads the
   * visitor again under the lock rather than reuse the read linking made: a
   * conditional filter on more than `_id` would be a collection scan on
   * FerretDB.
   */
  recordVisit(match: Match, visit: Visit, activity: RecentActivity, windowMs: number): Promise<VisitRecorded> {
    const visitorId = match.visitorId;
    return this.lock.run(visitorId, () => this.record(visitorId, match, visit, activity, windowMs));
  }

  private async record(visitorId: string, match: Match, visit: Visit, activity: RecentActivity, windowMs: number): Promise<VisitRecorded> {
    const before = await this.get(visitorId);
    if (!before) throw new Error(`visitor ${visitorId} disappeared`);
    const next = recordVisit(toRecord(before), match, visit);
    const cutoff = visit.now - windowMs;
    const kept = before.recent.filter((r) => r.t > cutoff);
    const overflow = kept.length + 1 - RECENT_CAP;
    const set = { ...stateOf(next), lastSeenAt: visit.now, ...(before.visitCount === 0 ? { firstSeenAt: visit.now } : {}) };
    const after = await this.col.findOneAndUpdate(
      { _id: visitorId },
      overflow > 0
        ? { $inc: { visitCount: 1 }, $set: { ...set, recent: [...kept.slice(overflow), activity] } }
        : { $inc: { visitCount: 1 }, $set: set, $push: { recent: activity } },
      { returnDocument: 'after' },
    );
    if (!after) throw new Error(`visitor ${visitorId} disappeared`);
    if (after.mergedInto) await this.col.updateOne({ _id: after.mergedInto }, { $inc: { mergedVisits: 1 } });
    if (overflow <= 0 && before.recent.length !== kept.length) await this.col.updateOne({ _id: visitorId }, { $pull: { recent: { t: { $lte: cutoff } } } });
    return {
      visitCount: after.visitCount + (after.mergedVisits ?? 0),
      firstSeenAt: before.visitCount === 0 ? visit.now : before.firstSeenAt,
      previousSeenAt: before.visitCount === 0 ? visit.now : before.lastSeenAt,
      recent: [...kept.slice(Math.max(0, overflow)), activity],
      seq: after.visitCount,
      before: toRecord(before),
    };
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
          $inc: { mergedVisits: a.visitCount + (a.mergedVisits ?? 0) },
          $addToSet: { mergedFrom: { $each: [from, ...aliases] } },
        },
      );
      await Promise.all([
        this.col.updateOne({ _id: from }, { $set: { mergedInto: into, suspects: [], residual: null } }),
        ...aliases.map((id) => this.col.updateOne({ _id: id }, { $set: { mergedInto: into } })),
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
      await this.col.updateOne({ _id: into }, { $set: { tokens: survivor.tokens }, $inc: { mergedVisits: -(a.visitCount + (a.mergedVisits ?? 0)) }, $pull: { mergedFrom: from } });
      await this.col.updateOne({ _id: from }, { $set: { mergedInto: null, suspects: [], residual: null, tokens: restored.tokens } });
      return restored;
    });
  }
}
