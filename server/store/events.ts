// Identification events, with their search entries and webhook outbox
// entries (server/store/eventIndex.ts) in the same collection, `events`, so
// identify stores all of them with ONE command. Three `_id` families share
// it, disjoint as strings so that every range scan selects only its own:
//
//   req_<ulid>                      the event (requestId)
//   acc_<ulid>|<kind>|…|<ulid>      search entries (account ids are acc_<ulid>)
//   ~o|req_<ulid>                   webhook outbox entries
//
// 'acc_' < 'req_' < 'req_~' < '~o|' ('~' sorts after every character of a
// ULID, an account id or a kind), so retention's ['req_', req_<time>) range
// reads events only, a search's `<acc>|<kind>|` ranges entries of that account
// and kind only, and the outbox's ('~o|', …) range outbox entries only.
// test/server/store/events-collection.test.ts pins the account id's form and the ranges.
// (The entries used to have a collection of their own, `eventIndex`;
// server/store/migrations.ts moves an older database's entries here.)
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { z } from 'zod';
import type { DecisionSchema } from '../../contract/decisions.js';
import { Binary, type AnyBulkWriteOperation, type Collection, type Db } from 'mongodb';
import type { Stamp } from './audit.js';
import { entriesOf, entryIdsOf, EVENTS, factsOf, type EventIndexRepo, type IndexEntry, type OutboxEntry } from './eventIndex.js';

export { EVENTS };

/** The event family of the collection: only these `_id`s are events. */
export const isEventId = (id: string) => id.startsWith('req_');

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
  /** The visitor's visits with this one, when it was first seen, and whether the site's server vouched for the linkedId (rules see them; absent on events stored before rules existed). */
  visitCount?: number;
  firstSeenAt?: number;
  linkedIdVouched?: boolean;
  /** The high-recall id identify answered, when it was not the visitorId (absent: the same). */
  highRecallVisitorId?: string;
  /** What the project's ruleset decided (server/decisions/); absent when none was in force: NO_DECISION. */
  decision?: StoredDecision;
  /** An analyst's verdict. */
  label?: StoredLabel | null;
}

/** Stored as the contract's Decision reads. */
export type StoredDecision = z.infer<typeof DecisionSchema>;

/** What an event without a stored decision was decided: no ruleset judged it (none was in force, or it predates rules), so it was allowed. */
export const NO_DECISION: StoredDecision = { action: 'allow', rulesetVersion: 0, testMatches: [] };

export interface StoredLabel {
  verdict: 'fraud' | 'legitimate';
  note: string;
  labeledAt: Date;
  labeledBy: string;
}

/**
 * The event as the collection holds it: its verdicts and IP location (about
 * 40 small fields) as JSON text, and its signals (3.6 KB of JSON text) as
 * deflated bytes (`signals`, about half as many). Nothing queries inside
 * them (search reads its entries' facts); a database that encodes documents
 * field by field (FerretDB) stores such an event for 0.29 instead of 0.50 ms
 * of its CPU (issue 27). Events written before hold objects and
 * `signalsJson`; reads accept both.
 */
type StoredEventDoc = Omit<EventDoc, 'verdicts' | 'ipLocation' | 'signalsJson'> & {
  verdicts: EventDoc['verdicts'] | string;
  ipLocation: EventDoc['ipLocation'] | string;
  signals?: Binary;
  signalsJson?: string;
};

function stored(e: EventDoc): StoredEventDoc {
  const { signalsJson, ...rest } = e;
  return { ...rest, verdicts: JSON.stringify(e.verdicts), ipLocation: JSON.stringify(e.ipLocation), signals: new Binary(deflateRawSync(signalsJson)) };
}

function asRead(e: StoredEventDoc): EventDoc {
  const { signals, signalsJson, ...rest } = e;
  return {
    ...rest,
    verdicts: typeof e.verdicts === 'string' ? (JSON.parse(e.verdicts) as EventDoc['verdicts']) : e.verdicts,
    ipLocation: typeof e.ipLocation === 'string' ? (JSON.parse(e.ipLocation) as EventDoc['ipLocation']) : e.ipLocation,
    signalsJson: signals ? inflateRawSync(signals.value()).toString() : (signalsJson ?? '{}'),
  };
}

/** What the retention sweep needs of an event to delete it and its visit. */
export type ExpiringEvent = Pick<EventDoc, '_id' | 'accountId' | 'projectId' | 'visitorId' | 'visitSeq' | 'linkedId' | 'ip' | 'suspect' | 'decision' | 'label'>;

/** Any document of the collection. */
type Stored = StoredEventDoc | IndexEntry | OutboxEntry;

/** Events deleted per command (with up to 11 entries each). */
const DELETE_BATCH = 100;

export class EventsRepo {
  private readonly col: Collection<StoredEventDoc>;
  private readonly all: Collection<Stored>;

  constructor(
    db: Db,
    private readonly index: EventIndexRepo,
  ) {
    this.col = db.collection(EVENTS);
    this.all = db.collection(EVENTS);
  }

  /**
   * Stores the event, its search entries and `extra` entries (a webhook
   * outbox entry) with one command: an ORDERED insertMany, the event first.
   * The server writes the documents in order and stops at the first failure,
   * so every entry stored has its event stored before it: a duplicate
   * requestId writes nothing, and a failure after the event leaves an event
   * that some searches miss (retention and deletion still find it by its
   * requestId and its visit, and delete every entry it can have), never a
   * search or outbox entry without its event (a fan-out of nothing, entries
   * no retention would reach). Unordered, the entries could be stored although
   * the event was not. mongos keeps an ordered insert's order across shards.
   */
  async insert(doc: EventDoc, extra: OutboxEntry[] = []): Promise<void> {
    await this.all.insertMany([stored(doc), ...entriesOf(doc, factsOf(doc)), ...extra], { ordered: true });
  }

  async get(requestId: string): Promise<EventDoc | null> {
    if (!isEventId(requestId)) return null;
    const found = await this.col.findOne({ _id: requestId });
    return found && asRead(found);
  }

  /** Events by requestId, in no particular order (absent ones left out). */
  async getMany(requestIds: readonly string[]): Promise<EventDoc[]> {
    const ids = requestIds.filter(isEventId);
    if (!ids.length) return [];
    return (await this.col.find({ _id: { $in: ids } }).toArray()).map(asRead);
  }

  async update(requestId: string, set: Partial<Pick<EventDoc, 'suspect' | 'linkedId' | 'tagJson' | 'label'>>, stamp?: Stamp): Promise<EventDoc | null> {
    if (!isEventId(requestId)) return null;
    await stamp?.intend(this.col, requestId);
    const found = await this.col.findOneAndUpdate({ _id: requestId }, stamp ? stamp.update({ $set: set }) : { $set: set }, { returnDocument: 'before' });
    if (!found) return null;
    stamp?.landed();
    const before = asRead(found);
    const after = { ...before, ...set };
    if (after.suspect !== before.suspect || after.linkedId !== before.linkedId || after.label?.verdict !== before.label?.verdict)
      await this.index.reindex(before, after);
    return after;
  }

  /**
   * Up to `limit` events whose requestId sorts before `beforeId`: requestIds
   * are `req_<ulid>` and ULIDs sort by time, so this is a range on `_id`
   * (an index range on MongoDB and on the dev database's patched FerretDB)
   * that holds events only (entries sort before 'req_', outbox
   * entries after every requestId).
   */
  olderThan(beforeId: string, limit: number): Promise<ExpiringEvent[]> {
    if (!isEventId(beforeId)) throw new Error(`olderThan: ${beforeId} is not a requestId bound`);
    return this.col
      .find({ _id: { $gte: 'req_', $lt: beforeId } })
      .project<ExpiringEvent>({ _id: 1, accountId: 1, projectId: 1, visitorId: 1, visitSeq: 1, linkedId: 1, ip: 1, suspect: 1, decision: 1, label: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Deletes events and their search entries: one ordered command per 100
   * events, their entries first, so search never lists a deleted event (and
   * a failure half way leaves events, which a retry finds, rather than
   * entries without their event).
   */
  async delete(events: readonly ExpiringEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += DELETE_BATCH) {
      const batch = events.slice(i, i + DELETE_BATCH);
      const ops: AnyBulkWriteOperation<Stored>[] = [...batch.flatMap((e) => entryIdsOf(e)), ...batch.map((e) => e._id)].map((_id) => ({
        deleteOne: { filter: { _id } },
      }));
      await this.all.bulkWrite(ops, { ordered: true });
    }
  }
}
