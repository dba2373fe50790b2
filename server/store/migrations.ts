// One-time moves of data stored by earlier versions into today's layout, run
// at start-up before anything is served (server/maintenance.ts: by the
// cluster's primary before it forks its workers, else by the process before
// it listens). Each is idempotent and safe in two processes at once (two
// machines starting against one database): run again, it finds nothing left
// to move.
import { MongoBulkWriteError, type Collection, type Db, type Document } from 'mongodb';
import { EVENTS } from './eventIndex.js';
import { upsert } from './errors.js';
import type { Store } from './index.js';

/** Where search and outbox entries were kept before they moved into the events collection. */
export const LEGACY_EVENT_INDEX = 'eventIndex';

const BATCH = 1_000;

export interface Migrated {
  /** Entries of `eventIndex` this process inserted into `events` (0 when there was no `eventIndex`). */
  eventIndex: number;
  /** Owners this process recorded for accounts of one user made before accounts had members. */
  owners: number;
}

export async function migrate(store: Store): Promise<Migrated> {
  return { eventIndex: await moveEventIndex(store.db), owners: await addOwners(store.db) };
}

const OWNERS_DONE = 'migration:owners';

/**
 * Before teams, an account was its one user (`users.accountId`). Each such
 * user becomes the owner of their account: a membership `<accountId>|<userId>`
 * inserted unless it exists (a second run, another process, or a sign-up
 * made since, which writes its own), so nothing is lost or doubled. A marker
 * in `instance` skips the walk on later starts.
 */
export async function addOwners(db: Db, batch = BATCH): Promise<number> {
  const instance = db.collection<{ _id: string; at?: Date }>('instance');
  if (await instance.findOne({ _id: OWNERS_DONE })) return 0;
  const members = db.collection('members');
  let added = 0;
  let docs: Document[] = [];
  for await (const u of db.collection<{ _id: string; accountId?: string; createdAt?: Date }>('users').find({}, { batchSize: batch })) {
    if (!u.accountId) continue;
    docs.push({ _id: `${u.accountId}|${u._id}`, accountId: u.accountId, userId: u._id, role: 'owner', joinedAt: u.createdAt ?? new Date(0) });
    if (docs.length < batch) continue;
    added += await insertMissing(members, docs);
    docs = [];
  }
  added += await insertMissing(members, docs);
  await upsert(() => instance.updateOne({ _id: OWNERS_DONE }, { $set: { at: new Date() } }, { upsert: true }));
  return added;
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
