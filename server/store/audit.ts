// The audit log: one document per change. `_id` = `<accountId>|<ULID of its
// time>`, so a page of one account's entries, newest first within a time
// window, is an `_id` range (an index range on FerretDB too, see
// docs/database.md); the member and action filters apply beside it. Kept
// AUDIT_RETENTION_DAYS (at least 400), swept by the maintenance loop.
//
// An entry and its change are written so that a crash between them loses
// neither, without transactions (FerretDB v1 has none; single-document
// writes are atomic on both): the entry is written first, `pending` and
// naming the one document whose write makes the change (the subject); that
// write stamps the subject with the entry's id (STAMP_FIELD), in the same
// single-document write; then the entry is confirmed and the stamp taken
// out. An entry left pending (the process died, or failed while settling)
// is settled by the document itself: stamped, the change happened and the
// entry is confirmed; not stamped, it did not and the entry goes. A subject
// the write removes settles by its absence.
import type { Collection, Db, Document } from 'mongodb';
import { insertUnique } from './errors.js';

export interface AuditActor {
  type: 'user' | 'key' | 'anonymous';
  id: string | null;
  label: string | null;
}

/** The document whose single write makes an audited change: `removes` when that write deletes it. */
export interface AuditSubject {
  collection: string;
  id: string;
  removes?: true;
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
  /** Until the change is known to have happened: the document its write stamps. Absent on every entry the log shows. */
  pending?: AuditSubject;
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

/**
 * The field of a subject that holds the ids of its pending entries: an
 * array, since two changes of one document at once each leave theirs.
 * Absent but for the moment between a change and its confirmation.
 */
export const STAMP_FIELD = 'pendingAudit';

/** A subject as the stamp's code sees it. */
interface StampedDoc {
  _id: string;
  [STAMP_FIELD]?: string[];
}

/** Runs a write of the subject the way its repository serializes writes of that document in this process. */
type Serial = (write: () => Promise<void>) => Promise<void>;
const direct: Serial = (write) => write();

/**
 * An audited change on its way, handed to the store method that makes it.
 * That method calls `intend` just before its write (nothing is written for
 * a change it refuses before writing), stamps the write (`update`,
 * `insert`), and says `landed` when the write took effect.
 */
export class Stamp {
  private subject: { col: Collection<StampedDoc>; doc: AuditSubject } | null = null;
  private serial: Serial | null = null;

  constructor(
    private readonly repo: AuditRepo,
    readonly entry: AuditDoc,
    /** Tests: called once the pending entry is written (server/audit/log.ts simulates a crash there). */
    private readonly intended: () => void = () => {},
  ) {}

  get id(): string {
    return this.entry._id;
  }

  /** Writes the entry, pending, naming the document the next write changes (or removes). One per change. */
  async intend<T extends Document>(col: Collection<T>, id: string, removes = false): Promise<void> {
    if (this.subject) throw new Error('an audited change is made by one write');
    const doc: AuditSubject = { collection: col.collectionName, id, ...(removes && { removes: true as const }) };
    this.subject = { col: col as unknown as Collection<StampedDoc>, doc };
    await this.repo.insertPending({ ...this.entry, pending: doc });
    this.intended();
  }

  /** `update` that also stamps the document (typed as given: the stamp is the store's, not the document type's). */
  update<U extends object>(update: U): U {
    const u = update as { $addToSet?: Record<string, unknown> };
    return { ...update, $addToSet: { ...u.$addToSet, [STAMP_FIELD]: this.id } };
  }

  /** A document to insert, stamped. */
  insert<D extends object>(doc: D): D {
    return { ...doc, [STAMP_FIELD]: [this.id] };
  }

  /** An update that puts back what a refused change wrote, taking the stamp out in the same write. */
  undo<U extends object>(update: U): U {
    this.serial = null;
    const u = update as { $pull?: Record<string, unknown> };
    return { ...update, $pull: { ...u.$pull, [STAMP_FIELD]: this.id } };
  }

  /** The stamped write took effect; `serial`: how its repository serializes writes of the document (the stamp's removal is one). */
  landed(serial: Serial = direct): void {
    this.serial = serial;
  }

  /** @internal AuditRepo's view. */
  state() {
    return { subject: this.subject, serial: this.serial };
  }
}

export class AuditRepo {
  private readonly col: Collection<AuditDoc>;

  constructor(private readonly db: Db) {
    this.col = db.collection('audit');
  }

  async ensureIndexes(): Promise<void> {
    // The settling sweep's query on MongoDB (FerretDB scans: the log holds dashboard changes, not identifications).
    await this.col.createIndex({ pending: 1 });
  }

  /** An entry whose change cannot be half made (a sign-in, a failed one): written as it is. */
  async insert(doc: AuditDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /** The stamp of a change recorded as `entry`; `intended`: tests' crash point after its pending entry is written. */
  stamp(entry: AuditDoc, intended?: () => void): Stamp {
    return new Stamp(this, entry, intended);
  }

  /** @internal Stamp.intend. */
  async insertPending(doc: AuditDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /**
   * After the change returned: its entry confirmed and the stamp taken out
   * (two commands), or, when the write changed nothing, the entry dropped
   * (one); nothing when the change was refused before its write.
   */
  async finish(stamp: Stamp): Promise<void> {
    const { subject, serial } = stamp.state();
    if (!subject) return;
    if (!serial) {
      await this.col.deleteOne({ _id: stamp.id });
      return;
    }
    const { matchedCount } = await this.col.updateOne({ _id: stamp.id }, { $unset: { pending: '' } });
    // The sweep dropped it while this change was slower than its grace: put it back.
    if (!matchedCount) await insertUnique(this.col, stamp.entry);
    if (!subject.doc.removes) await serial(() => clearStamp(subject.col, subject.doc.id, stamp.id));
  }

  /** After the change threw: what the subject says decides (the write may have been made before a later step failed, or undone). */
  async settle(stamp: Stamp): Promise<void> {
    const { subject } = stamp.state();
    if (subject) await this.resolve({ ...stamp.entry, pending: subject.doc }, false);
  }

  /** The sweep: settles entries pending since `since` or longer (their process died, or could not settle them); how many. */
  async settlePending(since: Date): Promise<number> {
    const docs = await this.col.find({ pending: { $exists: true }, at: { $lte: since } }).toArray();
    for (const doc of docs) await this.resolve(doc as AuditDoc & { pending: AuditSubject }, true);
    return docs.length;
  }

  /** Confirms the entry when its subject says the change happened, else deletes it; `onlyPending`: leaves one confirmed meanwhile alone. */
  private async resolve(doc: AuditDoc & { pending: AuditSubject }, onlyPending: boolean): Promise<void> {
    const { collection, id, removes } = doc.pending;
    const subject = this.db.collection<StampedDoc>(collection);
    const found = await subject.findOne({ _id: id }, { projection: { [STAMP_FIELD]: 1 } });
    const happened = removes ? found === null : (found?.[STAMP_FIELD] ?? []).includes(doc._id);
    const filter = onlyPending ? { _id: doc._id, pending: { $exists: true } } : { _id: doc._id };
    if (!happened) {
      await this.col.deleteOne(filter);
      return;
    }
    const { matchedCount } = await this.col.updateOne(filter, { $unset: { pending: '' } });
    // Settling its own change, a process puts back an entry the sweep dropped before the write landed.
    if (!matchedCount && !onlyPending) {
      const { pending: _subject, ...entry } = doc;
      await insertUnique(this.col, entry);
    }
    if (!removes) await clearStamp(subject, id, doc._id);
  }

  /** Newest first, at most `limit`; entries still pending are not shown. */
  page(q: AuditQuery): Promise<AuditDoc[]> {
    const filter: Record<string, unknown> = { _id: { $gte: `${q.accountId}|${q.lo}`, $lt: `${q.accountId}|${q.hi}` }, pending: { $exists: false } };
    if (q.member !== undefined) filter['actor.id'] = q.member;
    if (q.action !== undefined) filter.action = q.action;
    return this.col.find(filter).sort({ _id: -1 }).limit(q.limit).toArray();
  }

  /**
   * A deleted visitor's events are no longer named: entries about them keep
   * what happened, by whom and when, but neither the event nor the values
   * changed (a linkedId or a tag names the person as well as the event did).
   * Called before the events go: one still pending is settled first, while
   * its event can say whether the change happened (its subject names it).
   */
  async forgetEvents(accountId: string, requestIds: string[]): Promise<void> {
    if (!requestIds.length) return;
    const about = { accountId, 'target.type': 'event', 'target.id': { $in: requestIds } };
    for (const doc of await this.col.find({ ...about, pending: { $exists: true } }).toArray()) {
      await this.resolve(doc as AuditDoc & { pending: AuditSubject }, true);
    }
    await this.col.updateMany(about, { $set: { 'target.id': 'deleted', before: null, after: null } });
  }

  /** Tests: every entry of every account, pending ones included. */
  all(): Promise<AuditDoc[]> {
    return this.col.find({}).sort({ _id: 1 }).toArray();
  }

  async deleteBefore(cutoff: Date): Promise<number> {
    return (await this.col.deleteMany({ at: { $lt: cutoff } })).deletedCount;
  }
}

/** Takes one stamp out of a document: the field goes when it was the only one (one command), else that id. */
async function clearStamp(col: Collection<StampedDoc>, _id: string, stampId: string): Promise<void> {
  const { matchedCount } = await col.updateOne({ _id, [STAMP_FIELD]: [stampId] }, { $unset: { [STAMP_FIELD]: '' } });
  if (!matchedCount) await col.updateOne({ _id }, { $pull: { [STAMP_FIELD]: stampId } });
}
