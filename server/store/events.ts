// Identification events (`_id` = requestId). Each event is indexed for
// search (server/store/eventIndex.ts): one insertMany, in parallel with its insert.
import type { Collection, Db } from 'mongodb';
import { entriesOf, factsOf, type EventIndexRepo, type OutboxEntry } from './eventIndex.js';

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

/** What the retention sweep needs of an event to delete it and its visit. */
export type ExpiringEvent = Pick<EventDoc, '_id' | 'accountId' | 'visitorId' | 'visitSeq' | 'linkedId' | 'ip' | 'suspect'>;

export class EventsRepo {
  private readonly col: Collection<EventDoc>;

  constructor(
    db: Db,
    private readonly index: EventIndexRepo,
  ) {
    this.col = db.collection('events');
  }

  /**
   * Stores the event and, in parallel, its search entries plus `extra`
   * entries of the same collection (a webhook outbox entry) in one insertMany.
   */
  async insert(doc: EventDoc, extra: OutboxEntry[] = []): Promise<void> {
    await Promise.all([this.col.insertOne(doc), this.index.insert([...entriesOf(doc, factsOf(doc)), ...extra])]);
  }

  async get(requestId: string): Promise<EventDoc | null> {
    return this.col.findOne({ _id: requestId });
  }

  async update(requestId: string, set: Partial<Pick<EventDoc, 'suspect' | 'linkedId' | 'tagJson'>>): Promise<EventDoc | null> {
    const before = await this.col.findOneAndUpdate({ _id: requestId }, { $set: set }, { returnDocument: 'before' });
    if (!before) return null;
    const after = { ...before, ...set };
    if (after.suspect !== before.suspect || after.linkedId !== before.linkedId) await this.index.reindex(before, after);
    return after;
  }

  /**
   * Up to `limit` events whose requestId sorts before `beforeId`: requestIds
   * are `req_<ulid>` and ULIDs sort by time, so this is a range on `_id`
   * (an index range on MongoDB; FerretDB scans, which suits a background sweep).
   */
  olderThan(beforeId: string, limit: number): Promise<ExpiringEvent[]> {
    return this.col
      .find({ _id: { $gte: 'req_', $lt: beforeId } })
      .project<ExpiringEvent>({ _id: 1, accountId: 1, visitorId: 1, visitSeq: 1, linkedId: 1, ip: 1, suspect: 1 })
      .limit(limit)
      .toArray();
  }

  /** Deletes events, and their search entries (first, so search never lists a deleted event). */
  async delete(events: readonly ExpiringEvent[]): Promise<void> {
    await this.index.deleteFor(events);
    if (events.length) await this.col.bulkWrite(events.map((e) => ({ deleteOne: { filter: { _id: e._id } } })));
  }
}
