// The audit log: one document per change. `_id` = `<accountId>|<ULID of its
// time>`, so a page of one account's entries, newest first within a time
// window, is an `_id` range (an index range on FerretDB too, see
// docs/database.md); the member and action filters apply beside it. Kept
// AUDIT_RETENTION_DAYS (at least 400), swept by the maintenance loop.
import type { Collection, Db } from 'mongodb';

export interface AuditActor {
  type: 'user' | 'key' | 'anonymous';
  id: string | null;
  label: string | null;
}

export interface AuditDoc {
  _id: string; // <accountId>|<ulid>
  accountId: string;
  at: Date;
  action: string;
  actor: AuditActor;
  target: { type: string; id: string } | null;
  ip: string;
  userAgent: string | null;
  /** What changed, as JSON text: customer data (an event's tag) may have keys MongoDB refuses as field names. */
  before: string | null;
  after: string | null;
}

export interface AuditQuery {
  accountId: string;
  /** `_id` bounds: entries with lo <= ulid part < hi. */
  lo: string;
  hi: string;
  member?: string | undefined;
  action?: string | undefined;
  limit: number;
}

export class AuditRepo {
  private readonly col: Collection<AuditDoc>;

  constructor(db: Db) {
    this.col = db.collection('audit');
  }

  async insert(doc: AuditDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /** Newest first, at most `limit`. */
  page(q: AuditQuery): Promise<AuditDoc[]> {
    const filter: Record<string, unknown> = { _id: { $gte: `${q.accountId}|${q.lo}`, $lt: `${q.accountId}|${q.hi}` } };
    if (q.member !== undefined) filter['actor.id'] = q.member;
    if (q.action !== undefined) filter.action = q.action;
    return this.col.find(filter).sort({ _id: -1 }).limit(q.limit).toArray();
  }

  /**
   * A deleted visitor's events are no longer named: entries about them keep
   * what happened, by whom and when, but neither the event nor the values
   * changed (a linkedId or a tag names the person as well as the event did).
   */
  async forgetEvents(accountId: string, requestIds: string[]): Promise<void> {
    if (!requestIds.length) return;
    await this.col.updateMany(
      { accountId, 'target.type': 'event', 'target.id': { $in: requestIds } },
      { $set: { 'target.id': 'deleted', before: null, after: null } },
    );
  }

  /** Tests: every entry of every account. */
  all(): Promise<AuditDoc[]> {
    return this.col.find({}).sort({ _id: 1 }).toArray();
  }

  async deleteBefore(cutoff: Date): Promise<number> {
    return (await this.col.deleteMany({ at: { $lt: cutoff } })).deletedCount;
  }
}
