// Identification events (`_id` = requestId) and the linkedId index:
// `<acc>:<sha256(linkedId)>` → the newest LINKED_CAP requestIds, so search by
// linkedId is a point read plus point reads of the events themselves.
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { upsert } from './errors.js';
import { KeyedLock } from './keyedLock.js';

export interface EventDoc {
  _id: string; // requestId
  accountId: string;
  projectId: string;
  visitorId: string;
  visitId: string;
  visitSeq: number;
  keyType: 'live' | 'test';
  confidence: number;
  botProbability: number;
  suspectScore: number;
  riskFactors: string[];
  verdicts: Record<string, unknown>;
  ip: string;
  ipLocation: Record<string, unknown>;
  url: string;
  referrer: string;
  /** JSON text: user objects may have keys with '.' or '$', which FerretDB rejects. */
  tagJson: string | null;
  linkedId: string | null;
  suspect: boolean;
  signalsJson: string;
  clientTimestamp: number;
  timestamp: number;
  createdAt: Date;
}

export const LINKED_CAP = 100;

/** What the retention sweep needs of an event to delete it and its visit. */
export type ExpiringEvent = Pick<EventDoc, '_id' | 'accountId' | 'visitorId' | 'visitSeq' | 'linkedId'>;

interface LinkedDoc {
  _id: string;
  requestIds: string[];
}

export class EventsRepo {
  private readonly col: Collection<EventDoc>;
  private readonly linked: Collection<LinkedDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('events');
    this.linked = db.collection('linkedIds');
  }

  async insert(doc: EventDoc): Promise<void> {
    await this.col.insertOne(doc);
    if (doc.linkedId !== null) await this.link(doc.accountId, doc.linkedId, doc._id);
  }

  async get(requestId: string): Promise<EventDoc | null> {
    return this.col.findOne({ _id: requestId });
  }

  async update(requestId: string, set: Partial<Pick<EventDoc, 'suspect' | 'linkedId' | 'tagJson'>>): Promise<EventDoc | null> {
    const before = await this.col.findOneAndUpdate({ _id: requestId }, { $set: set }, { returnDocument: 'before' });
    if (!before) return null;
    if (set.linkedId !== undefined && set.linkedId !== before.linkedId) {
      if (before.linkedId !== null) await this.unlink(before.accountId, before.linkedId, requestId);
      if (set.linkedId !== null) await this.link(before.accountId, set.linkedId, requestId);
    }
    return { ...before, ...set };
  }

  /**
   * Up to `limit` events whose requestId sorts before `beforeId`: requestIds
   * are `req_<ulid>` and ULIDs sort by time, so this is a range on `_id`
   * (an index range on MongoDB; FerretDB scans, which suits a background sweep).
   */
  olderThan(beforeId: string, limit: number): Promise<ExpiringEvent[]> {
    return this.col
      .find({ _id: { $gte: 'req_', $lt: beforeId } })
      .project<ExpiringEvent>({ _id: 1, accountId: 1, visitorId: 1, visitSeq: 1, linkedId: 1 })
      .limit(limit)
      .toArray();
  }

  /** Deletes events, and their entries in the linkedId index. */
  async delete(events: readonly ExpiringEvent[]): Promise<void> {
    for (const e of events) if (e.linkedId !== null) await this.unlink(e.accountId, e.linkedId, e._id);
    if (events.length) await this.col.bulkWrite(events.map((e) => ({ deleteOne: { filter: { _id: e._id } } })));
  }

  /** Newest first. */
  async byLinkedId(accountId: string, linkedId: string, limit: number): Promise<EventDoc[]> {
    const ids = (await this.linked.findOne({ _id: linkedKey(accountId, linkedId) }))?.requestIds ?? [];
    const docs = await Promise.all(ids.slice(0, limit).map((id) => this.col.findOne({ _id: id })));
    return docs.filter((d): d is EventDoc => d !== null && d.accountId === accountId && d.linkedId === linkedId);
  }

  private link(accountId: string, linkedId: string, requestId: string): Promise<void> {
    const _id = linkedKey(accountId, linkedId);
    return this.lock.run(_id, async () => {
      const ids = (await this.linked.findOne({ _id }))?.requestIds ?? [];
      // requestIds are ULIDs: sorting descending keeps newest first even if inserts raced.
      const next = [...new Set([requestId, ...ids])].sort().reverse().slice(0, LINKED_CAP);
      await upsert(() => this.linked.replaceOne({ _id }, { requestIds: next }, { upsert: true }));
    });
  }

  private unlink(accountId: string, linkedId: string, requestId: string): Promise<void> {
    const _id = linkedKey(accountId, linkedId);
    return this.lock.run(_id, async () => {
      const ids = (await this.linked.findOne({ _id }))?.requestIds ?? [];
      const rest = ids.filter((id) => id !== requestId);
      if (rest.length) await this.linked.updateOne({ _id }, { $set: { requestIds: rest } });
      else await this.linked.deleteOne({ _id });
    });
  }
}

const linkedKey = (accountId: string, linkedId: string) =>
  `${accountId}:${createHash('sha256').update(linkedId).digest('base64url')}`;
