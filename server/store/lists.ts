// Named lists of a project (server/decisions/) and their entries.
//
// - lists: `lst_<ulid>`, unique by (projectId, name), with the count of its
//   entries. A list deleted and made again under its name is another list:
//   caches never mix their entries.
// - listEntries: `<listId>|<value>`, so that every read of one list is an
//   `_id` range (an index range on FerretDB too: docs/database.md) and adding
//   or removing values is a batch of `_id` operations.
// - listChanges: `<listId>|<Unix ms, 13 digits>|<ulid>`, what each write did
//   to a list (values set, with their expiry, and values removed), packed as
//   JSON text. The caches of other processes learn of a change by reading
//   the records since they last loaded: an `_id` range, so that what they
//   read is what changed, not the list (FerretDB reads ~10,000 documents a
//   second and filters anything but `_id` in Go; a packed record of 1,000
//   values reads like one). Records are kept CHANGES_KEPT_MS, then swept.
// - listSnapshots: `<listId>|<takenAt, 13 digits>|<chunk, 4 digits>`, a
//   list's entries as a sweep read them from listEntries, packed as JSON
//   text 5,000 to a document, so that a cache's first load of a big list
//   reads a few documents (and the changes since), not one per entry. The
//   list document names its complete snapshot (`snapshot`); older ones are
//   deleted once a newer one is named.
import type { LIST_KINDS } from '../../contract/decisions.js';
import { MongoBulkWriteError, type Collection, type Db, type UpdateFilter } from 'mongodb';
import type { Stamp } from './audit.js';
import { monotonicFactory } from 'ulid';
import { isDuplicateKey } from './errors.js';
import { KeyedLock } from './keyedLock.js';

export type ListKind = (typeof LIST_KINDS)[number];

export interface ListDoc {
  _id: string; // lst_<ulid>
  accountId: string;
  projectId: string;
  name: string;
  kind: ListKind;
  description: string;
  /** Entries held (expired ones until removed), kept by each change: counting a list of 100,000 on FerretDB takes seconds. */
  entries: number;
  createdAt: Date;
  updatedAt: Date;
  /** The list's complete snapshot: its chunks hold the entries as of no later than `takenAt` (Unix ms). */
  snapshot?: { takenAt: number; chunks: number };
}

export interface ListEntryDoc {
  _id: string; // <listId>|<value>
  listId: string;
  accountId: string;
  projectId: string;
  /** Canonical (server/decisions/listValues.ts). */
  value: string;
  /** '' when none. */
  note: string;
  /** Unix ms from which the entry no longer matches; null: never. */
  expiresAt: number | null;
  addedAt: number;
  updatedAt: number;
}

/** What a cache knows of a value: held with its expiry, or removed. */
export interface ListEntryState {
  value: string;
  expiresAt: number | null;
  removed?: true;
}

interface ChangeDoc {
  _id: string; // <listId>|<at, 13 digits>|<ulid>
  listId: string;
  at: number;
  /** JSON of [value, expiresAt] for a value set, [value] for one removed, in the order they were written. */
  changes: string;
}

interface SnapshotDoc {
  _id: string; // <listId>|<takenAt, 13 digits>|<chunk, 4 digits>
  /** JSON of [value, expiresAt], by value. */
  entries: string;
}

/** How long change records are kept: a load replays them from within this only, less a margin (listCache.ts). */
export const CHANGES_KEPT_MS = 7 * 24 * 3600_000;

/** FerretDB narrows an `_id` `$in` of up to 1,000 ids in SQL (docs/database.md). */
const BATCH = 1000;
/** Entries a page of a whole list's read: one command stays well inside the database time limit on FerretDB. */
const LOAD_PAGE = 2000;
/** Entries a snapshot document packs: ~150 kB of IP ranges. */
const SNAPSHOT_CHUNK = 5000;

export const entryId = (listId: string, value: string) => `${listId}|${value}`;
const changeTime = (at: number) => String(at).padStart(13, '0');
const snapshotPrefix = (listId: string, takenAt: number) => `${listId}|${changeTime(takenAt)}|`;

/**
 * The smallest string above every string that starts with `prefix` (in code
 * point order, which is UTF-8's byte order, MongoDB's string order): its
 * last code point, plus one.
 */
export function prefixEnd(prefix: string): string {
  const chars = [...prefix];
  while (chars.length) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last === 0x10ffff) continue;
    return chars.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return '\u{10ffff}';
}

/** Every `_id` of the list's entries, change records and snapshots lies in [`${listId}|`, `${listId}}`) ('}' follows '|'). */
const listRange = (listId: string) => ({ $gt: `${listId}|`, $lt: `${listId}}` });

export class ListsRepo {
  private readonly lists: Collection<ListDoc>;
  private readonly entries: Collection<ListEntryDoc>;
  private readonly changes: Collection<ChangeDoc>;
  private readonly snapshots: Collection<SnapshotDoc>;
  private readonly lock = new KeyedLock();
  /** Orders the records of one millisecond as they were written (within a process). */
  private readonly ulid = monotonicFactory();

  constructor(db: Db) {
    this.lists = db.collection('lists');
    this.entries = db.collection('listEntries');
    this.changes = db.collection('listChanges');
    this.snapshots = db.collection('listSnapshots');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([this.lists.createIndex({ projectId: 1, name: 1 }, { unique: true }), this.changes.createIndex({ at: 1 })]);
  }

  /**
   * Inserts unless the project has `max` lists ('full') or one of that name
   * ('exists'). The count is exact within this process (under a lock per
   * project); several processes creating at once may each add one more. The
   * name is unique across processes (a unique index).
   */
  insertBounded(doc: ListDoc, max: number, stamp?: Stamp): Promise<'created' | 'exists' | 'full'> {
    return this.lock.run(doc.projectId, async () => {
      if ((await this.lists.countDocuments({ projectId: doc.projectId })) >= max) return 'full';
      await stamp?.intend(this.lists, doc._id);
      try {
        await this.lists.insertOne(stamp ? stamp.insert(doc) : doc);
        stamp?.landed();
        return 'created';
      } catch (err) {
        if (isDuplicateKey(err)) return 'exists';
        throw err;
      }
    });
  }

  /** The project's lists, by name. */
  ofProject(projectId: string): Promise<ListDoc[]> {
    return this.lists.find({ projectId }).sort({ name: 1 }).toArray();
  }

  byId(listId: string): Promise<ListDoc | null> {
    return this.lists.findOne({ _id: listId });
  }

  byName(projectId: string, name: string): Promise<ListDoc | null> {
    return this.lists.findOne({ projectId, name });
  }

  setDescription(listId: string, description: string, at: Date, stamp?: Stamp): Promise<ListDoc | null> {
    return this.updateList(listId, { $set: { description, updatedAt: at } }, stamp);
  }

  /** After a change of its entries: `delta` more of them (the write an audited entries change is recorded with). */
  changedEntries(listId: string, delta: number, at: Date, stamp?: Stamp): Promise<ListDoc | null> {
    return this.updateList(listId, { $inc: { entries: delta }, $set: { updatedAt: at } }, stamp);
  }

  private async updateList(listId: string, update: UpdateFilter<ListDoc>, stamp?: Stamp): Promise<ListDoc | null> {
    await stamp?.intend(this.lists, listId);
    const doc = await this.lists.findOneAndUpdate({ _id: listId }, stamp ? stamp.update(update) : update, { returnDocument: 'after' });
    if (doc) stamp?.landed();
    return doc;
  }

  /** The list, its entries, change records and snapshots; the list document last, so that a deletion cut short leaves a list to delete again. */
  async delete(listId: string, stamp?: Stamp): Promise<void> {
    await this.entries.deleteMany({ _id: listRange(listId) });
    await this.changes.deleteMany({ _id: listRange(listId) });
    await this.snapshots.deleteMany({ _id: listRange(listId) });
    await stamp?.intend(this.lists, listId, true);
    if ((await this.lists.deleteOne({ _id: listId })).deletedCount) stamp?.landed();
  }

  /** The entries of these values that the list holds. */
  async entriesOf(listId: string, values: readonly string[]): Promise<ListEntryDoc[]> {
    const found: ListEntryDoc[] = [];
    for (let i = 0; i < values.length; i += BATCH) {
      const ids = values.slice(i, i + BATCH).map((v) => entryId(listId, v));
      found.push(...(await this.entries.find({ _id: { $in: ids } }).toArray()));
    }
    return found;
  }

  /**
   * Writes entries: `replacing` ones are deleted first and inserted again
   * (FerretDB applies each update as a read and a write; a batch of deletes
   * and inserts is one command each way), then every entry is inserted. An
   * entry another process inserted meanwhile is replaced the same way.
   */
  async put(entries: readonly ListEntryDoc[], replacing: readonly string[]): Promise<void> {
    await this.deleteIds(replacing);
    for (let i = 0; i < entries.length; i += BATCH) {
      const batch = entries.slice(i, i + BATCH);
      try {
        await this.entries.insertMany(batch, { ordered: false });
      } catch (err) {
        // Unordered: all but the duplicates went in. Those go again, over what is there.
        const errors = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
        if (!errors.length || errors.some((e) => e.code !== 11000)) throw err;
        const again = errors.map((e) => batch[e.index]!);
        await this.deleteIds(again.map((d) => d._id));
        await this.entries.insertMany(again, { ordered: false });
      }
    }
  }

  /** Deletes the values' entries; how many there were. */
  async remove(listId: string, values: readonly string[]): Promise<number> {
    return this.deleteIds(values.map((v) => entryId(listId, v)));
  }

  private async deleteIds(ids: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < ids.length; i += BATCH) deleted += (await this.entries.deleteMany({ _id: { $in: ids.slice(i, i + BATCH) } })).deletedCount;
    return deleted;
  }

  /** Records a write's changes (after the write), for the caches of other processes. */
  async recordChanges(listId: string, at: number, changes: readonly ListEntryState[]): Promise<void> {
    const docs: ChangeDoc[] = [];
    for (let i = 0; i < changes.length; i += BATCH) {
      const packed = changes.slice(i, i + BATCH).map((c) => (c.removed ? [c.value] : [c.value, c.expiresAt]));
      docs.push({ _id: `${listId}|${changeTime(at)}|${this.ulid(at)}`, listId, at, changes: JSON.stringify(packed) });
    }
    if (docs.length) await this.changes.insertMany(docs);
  }

  /** Changes recorded at or after `since` (Unix ms), oldest first. */
  async changesSince(listId: string, since: number): Promise<ListEntryState[]> {
    const docs = await this.changes
      .find({ _id: { $gte: `${listId}|${changeTime(Math.max(0, since))}`, $lt: `${listId}}` } })
      .sort({ _id: 1 })
      .toArray();
    return docs.flatMap((d) =>
      (JSON.parse(d.changes) as ([string] | [string, number | null])[]).map((c): ListEntryState =>
        c.length === 1 ? { value: c[0], expiresAt: null, removed: true } : { value: c[0], expiresAt: c[1] },
      ),
    );
  }

  /** Deletes change records older than `before` (Unix ms). */
  async sweepChanges(before: number): Promise<number> {
    return (await this.changes.deleteMany({ at: { $lt: before } })).deletedCount;
  }

  /**
   * Up to `limit` lists due a snapshot, those without one first: of at least
   * `minEntries` entries without one, or with one taken before `before`
   * (Unix ms) whatever their size now (loads read it while it is current).
   */
  async dueForSnapshot(minEntries: number, before: number, limit: number): Promise<string[]> {
    const docs = await this.lists
      .find({ $or: [{ entries: { $gte: minEntries }, snapshot: { $exists: false } }, { 'snapshot.takenAt': { $lt: before } }] }, { projection: { _id: 1 } })
      .sort({ 'snapshot.takenAt': 1, _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => d._id);
  }

  /**
   * Writes the entries as the list's snapshot taken at `takenAt`, then names
   * it on the list document unless a newer one is named there already (a
   * sweep elsewhere), then deletes the list's older snapshots, or this one
   * when it lost. Whether it is the list's snapshot now.
   */
  async putSnapshot(listId: string, takenAt: number, entries: readonly ListEntryState[]): Promise<boolean> {
    const prefix = snapshotPrefix(listId, takenAt);
    const docs: SnapshotDoc[] = [];
    for (let i = 0; i < entries.length; i += SNAPSHOT_CHUNK) {
      const packed = entries.slice(i, i + SNAPSHOT_CHUNK).map((e) => [e.value, e.expiresAt]);
      docs.push({ _id: prefix + String(docs.length).padStart(4, '0'), entries: JSON.stringify(packed) });
    }
    if (docs.length) await this.snapshots.insertMany(docs);
    const named = await this.lists.updateOne(
      { _id: listId, $or: [{ snapshot: { $exists: false } }, { 'snapshot.takenAt': { $lt: takenAt } }] },
      { $set: { snapshot: { takenAt, chunks: docs.length } } },
    );
    if (!named.matchedCount) {
      await this.snapshots.deleteMany({ _id: { $gte: prefix, $lt: prefixEnd(prefix) } });
      return false;
    }
    await this.snapshots.deleteMany({ _id: { $gt: `${listId}|`, $lt: prefix } });
    return true;
  }

  /** The entries of the list's snapshot; null when its chunks are not all there (a newer snapshot replaced it meanwhile). */
  async snapshotOf(listId: string, snapshot: { takenAt: number; chunks: number }): Promise<ListEntryState[] | null> {
    const prefix = snapshotPrefix(listId, snapshot.takenAt);
    const docs = await this.snapshots
      .find({ _id: { $gte: prefix, $lt: prefixEnd(prefix) } })
      .sort({ _id: 1 })
      .toArray();
    if (docs.length !== snapshot.chunks) return null;
    return docs.flatMap((d) => (JSON.parse(d.entries) as [string, number | null][]).map(([value, expiresAt]) => ({ value, expiresAt })));
  }

  /** A page of entries by value, after the value `after`, starting with `prefix`. */
  page(listId: string, q: { after?: string | undefined; prefix?: string | undefined; limit: number }): Promise<ListEntryDoc[]> {
    const base = `${listId}|`;
    const from = base + (q.prefix ?? '');
    const lower = q.after !== undefined && base + q.after >= from ? { $gt: base + q.after } : { $gte: from };
    const upper = q.prefix ? base + prefixEnd(q.prefix) : `${listId}}`;
    return this.entries
      .find({ _id: { ...lower, $lt: upper } })
      .sort({ _id: 1 })
      .limit(q.limit)
      .toArray();
  }

  /** Every entry of the list (a snapshot, or a cache's first load of a list that has none), read in pages by `_id`. */
  async all(listId: string): Promise<ListEntryState[]> {
    const out: ListEntryState[] = [];
    let lower: { $gt: string } = { $gt: `${listId}|` };
    for (;;) {
      const docs = await this.entries
        .find({ _id: { ...lower, $lt: `${listId}}` } }, { projection: { value: 1, expiresAt: 1 } })
        .sort({ _id: 1 })
        .limit(LOAD_PAGE)
        .toArray();
      for (const d of docs) out.push({ value: d.value, expiresAt: d.expiresAt });
      if (docs.length < LOAD_PAGE) return out;
      lower = { $gt: docs[docs.length - 1]!._id };
    }
  }
}
