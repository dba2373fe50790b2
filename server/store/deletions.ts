// Visitor deletion (privacy requests): the durable jobs, and the purge of
// everything stored about a device's visitors. A job is claimed by a unique
// insert (`<acc>|<visitorId>`), so a request repeated, or made in two
// processes at once, queues one job; aliases of the device get a pointer
// document to the same job. Every purge step is idempotent, so a job
// interrupted by a restart is simply run again from its recorded step.
//
// The purge reaches the collections of other repositories directly (by
// `_id`, as they do): visitors, visitPages, fingerprints (the identity
// index, server/store/identity.ts), and events with their search entries
// (one collection, server/store/events.ts).
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { EVENTS } from './eventIndex.js';
import { pageOf } from './visits.js';
import type { Stamp } from './audit.js';
import { insertUnique } from './errors.js';

export type DeletionStatus = 'queued' | 'running' | 'done';

export interface DeletionDoc {
  _id: string; // <acc>|<visitorId>
  id: string; // del_<ulid>
  accountId: string;
  /** The visitor asked for, resolved to the device's surviving visitor. */
  visitorId: string;
  /** Set on pointer documents of aliases: the `_id` of the job. */
  pointer?: string;
  status: DeletionStatus;
  /** The device's visitors and their visit counts, recorded before anything is deleted. */
  visitors?: { id: string; visits: number }[];
  /** Steps done so far. */
  done?: string[];
  createdAt: Date;
  finishedAt?: Date | null;
}

/** How a visitor's deleted document is hidden first: reads and matching check the account. */
export const deletedAccount = (accountId: string) => `${accountId}#deleted`;

const BATCH = 500;

/** A document of another repository's collection, as the purge sees it. */
interface Keyed {
  _id: string;
  [field: string]: unknown;
}

export class DeletionsRepo {
  readonly col: Collection<DeletionDoc>;
  private readonly visitors: Collection<{ _id: string; accountId: string; rev?: number }>;
  private readonly pages: Collection<Keyed>;
  private readonly fingerprints: Collection<Keyed>;
  private readonly index: Collection<Keyed>;

  constructor(db: Db) {
    this.col = db.collection('deletions');
    this.visitors = db.collection('visitors');
    this.pages = db.collection('visitPages');
    this.fingerprints = db.collection('fingerprints');
    this.index = db.collection(EVENTS);
  }

  /** The job (or alias pointer) for a visitor id of the account. */
  get(accountId: string, visitorId: string): Promise<DeletionDoc | null> {
    return this.col.findOne({ _id: `${accountId}|${visitorId}` });
  }

  byKey(key: string): Promise<DeletionDoc | null> {
    return this.col.findOne({ _id: key });
  }

  /** Queues a job; false when one exists for the visitor already. */
  async claim(doc: DeletionDoc, stamp?: Stamp): Promise<boolean> {
    await stamp?.intend(this.col, doc._id);
    const claimed = await insertUnique(this.col, stamp ? stamp.insert(doc) : doc);
    if (claimed) stamp?.landed();
    return claimed;
  }

  /** How many jobs are not finished (metrics). */
  pendingCount(): Promise<number> {
    return this.col.countDocuments({ status: { $in: ['queued', 'running'] }, pointer: { $exists: false } });
  }

  /** Jobs not finished (a restart resumes them). A scan of a small collection. */
  unfinished(): Promise<DeletionDoc[]> {
    return this.col.find({ status: { $in: ['queued', 'running'] }, pointer: { $exists: false } }).toArray();
  }

  async set(key: string, set: Partial<DeletionDoc>): Promise<void> {
    await this.col.updateOne({ _id: key }, { $set: set });
  }

  async stepDone(key: string, step: string): Promise<void> {
    await this.col.updateOne({ _id: key }, { $addToSet: { done: step } });
  }

  /** Pointer documents for the device's other visitor ids, so a request naming any of them finds the job. */
  async point(job: DeletionDoc, visitorIds: string[]): Promise<void> {
    for (const v of visitorIds) {
      if (v === job.visitorId) continue;
      await insertUnique(this.col, {
        _id: `${job.accountId}|${v}`,
        id: job.id,
        accountId: job.accountId,
        visitorId: v,
        pointer: job._id,
        status: 'queued',
        createdAt: job.createdAt,
      });
    }
  }

  /** Hides the visitors from every read and from matching (their account no longer matches). */
  async hideVisitors(accountId: string, ids: string[]): Promise<void> {
    if (ids.length)
      await this.visitors.bulkWrite(
        ids.map((_id) => ({ updateOne: { filter: { _id }, update: { $set: { accountId: deletedAccount(accountId) }, $inc: { rev: 1 } } } })),
      );
  }

  async deleteVisitors(ids: string[]): Promise<void> {
    if (ids.length) await this.visitors.bulkWrite(ids.map((_id) => ({ deleteOne: { filter: { _id } } })));
  }

  /** The visitor's visit pages (`<visitorId>:<page>`, pages 0 up to its last). */
  async deleteVisitPages(visitorId: string, visits: number): Promise<void> {
    const last = pageOf(Math.max(visits, 1));
    const ops = Array.from({ length: last + 2 }, (_, p) => ({ deleteOne: { filter: { _id: `${visitorId}:${p}` } } }));
    await this.pages.bulkWrite(ops);
  }

  /** requestIds in the visitor's visit pages. */
  async requestIdsInPages(visitorId: string, visits: number): Promise<string[]> {
    const last = pageOf(Math.max(visits, 1));
    const docs = await Promise.all(Array.from({ length: last + 1 }, (_, p) => this.pages.findOne({ _id: `${visitorId}:${p}` })));
    return docs.flatMap((d) => ((d?.visits as { requestId: string }[] | undefined) ?? []).map((v) => v.requestId));
  }

  /** A batch of the visitor's search entries (`<acc>|v|<visitorId>|…`), oldest first. */
  async visitorEntries(accountId: string, visitorId: string): Promise<{ _id: string; r: string }[]> {
    const prefix = `${accountId}|v|${visitorId}|`;
    const docs = await this.index
      .find({ _id: { $gt: prefix, $lt: `${prefix}~` } })
      .limit(BATCH)
      .toArray();
    return docs.map((d) => ({ _id: d._id, r: String(d.r) }));
  }

  async deleteEntries(ids: string[]): Promise<void> {
    if (ids.length) await this.index.bulkWrite(ids.map((_id) => ({ deleteOne: { filter: { _id } } })));
  }

  /**
   * Removes the visitors from the account's identity index: token and merge
   * entries naming them go, and they leave every candidate list (exact and
   * partial keys, device model per prefix and AS, linkedIds, related
   * visitors). A list entry left with no visitor goes too: its key (a
   * linkedId's hash, a device on a network) is the visitor's, and a lookup finds no entry exactly as it finds an empty one.
   * Walks the account's entries by `_id` range in batches. Counters (crowd
   * sizes, Good–Turing counts, an exact key's holder count) are statistics
   * with no visitor in them and stay.
   */
  async scrubIdentity(accountId: string, ids: Set<string>): Promise<void> {
    let after = `${accountId}:`;
    const end = `${accountId};`; // ';' follows ':'
    for (;;) {
      const docs = await this.fingerprints
        .find({ _id: { $gt: after, $lt: end } })
        .sort({ _id: 1 })
        .limit(BATCH)
        .toArray();
      const ops: AnyBulkWriteOperation<Keyed>[] = [];
      for (const d of docs) {
        const _id = d._id;
        const claimed = /:(un)?merge:(.+)$/.exec(_id)?.[2];
        if (
          (typeof d.visitorId === 'string' && ids.has(d.visitorId)) ||
          (claimed !== undefined && ids.has(claimed)) ||
          (typeof d.into === 'string' && ids.has(d.into))
        ) {
          ops.push({ deleteOne: { filter: { _id } } });
          continue;
        }
        const set: Record<string, string[]> = {};
        for (const field of ['holders', 'visitorIds'] as const) {
          const list = d[field] as string[] | undefined;
          if (list?.some((v) => ids.has(v))) set[field] = list.filter((v) => !ids.has(v));
        }
        if (!Object.keys(set).length) continue;
        // A related-visitors list (`r:`) goes with its count: the key names the device and its network.
        const emptied = Object.keys(d).every(
          (field) => field === '_id' || set[field]?.length === 0 || (field === 'n' && _id.includes(':r:') && set.visitorIds?.length === 0),
        );
        ops.push(emptied ? { deleteOne: { filter: { _id } } } : { updateOne: { filter: { _id }, update: { $set: set } } });
      }
      if (ops.length) await this.fingerprints.bulkWrite(ops);
      if (docs.length < BATCH) return;
      after = docs[docs.length - 1]!._id;
    }
  }
}
