// One-time moves of data stored by earlier versions into today's layout, run
// at start-up before anything is served (server/maintenance.ts: by the
// cluster's primary before it forks its workers, else by the process before
// it listens). Each is idempotent and safe in two processes at once (two
// machines starting against one database): run again, it finds nothing left
// to move.
import { MongoBulkWriteError, type Collection, type Db, type Document } from 'mongodb';
import { EVENTS } from './eventIndex.js';
import type { Store } from './index.js';

/** Where search and outbox entries were kept before they moved into the events collection. */
export const LEGACY_EVENT_INDEX = 'eventIndex';

const BATCH = 1_000;

export interface Migrated {
  /** Entries of `eventIndex` this process inserted into `events` (0 when there was no `eventIndex`). */
  eventIndex: number;
}

export async function migrate(store: Store): Promise<Migrated> {
  return { eventIndex: await moveEventIndex(store.db) };
}

async function exists(db: Db, name: string): Promise<boolean> {
  return (await db.listCollections({ name }, { nameOnly: true }).toArray()).length > 0;
}

/**
 * Moves every document of the old `eventIndex` collection into `events`, in
 * batches, then drops `eventIndex`. Their `_id`s (`acc_…|…`, `~o|…`) are
 * disjoint from the events' (`req_…`), so nothing is overwritten. Inserts
 * ignore duplicates (an entry a previous, interrupted run or another process
 * copied already), and `eventIndex` is dropped only after this process
 * copied all of it, so whichever process drops it first, nothing is lost. A
 * walk that fails because another process dropped the collection meanwhile
 * ends there: that process had copied everything. Returns how many
 * documents this process inserted.
 */
export async function moveEventIndex(db: Db, batch = BATCH): Promise<number> {
  if (!(await exists(db, LEGACY_EVENT_INDEX))) return 0;
  const from = db.collection(LEGACY_EVENT_INDEX);
  const to = db.collection(EVENTS);
  let moved = 0;
  try {
    let docs: Document[] = [];
    for await (const doc of from.find({}, { batchSize: batch })) {
      docs.push(doc);
      if (docs.length < batch) continue;
      moved += await insertMissing(to, docs);
      docs = [];
    }
    moved += await insertMissing(to, docs);
  } catch (err) {
    if (await exists(db, LEGACY_EVENT_INDEX)) throw err;
    return moved;
  }
  await from.drop(); // a collection already dropped by another process is not an error
  return moved;
}

/** Inserts the documents not stored yet; how many it inserted. */
async function insertMissing(to: Collection, docs: Document[]): Promise<number> {
  if (!docs.length) return 0;
  try {
    return (await to.insertMany(docs, { ordered: false })).insertedCount;
  } catch (err) {
    const errors = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
    if (errors.length > 0 && errors.every((e) => e.code === 11000)) return (err as MongoBulkWriteError).insertedCount;
    throw err;
  }
}
