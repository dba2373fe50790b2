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
      await this.linked.updateOne({ _id }, { $set: { requestIds: ids.filter((id) => id !== requestId) } });
    });
  }
}

const linkedKey = (accountId: string, linkedId: string) =>
  `${accountId}:${createHash('sha256').update(linkedId).digest('base64url')}`;
