// The lists of recently seen projects, in this process, for the rules'
// `inList`. The project document carries `listsVersion`, which the lists
// service bumps after each change has been written: while the version a
// caller read is the one loaded, a lookup reads nothing. Otherwise what
// changed is read: the project's list documents (a list made, deleted or
// made again) and, for each list held, the changes recorded since the last
// load began, less OVERLAP_MS for writes that were in flight then in
// another process (replaying a change again, in order, changes nothing).
//
// A list not held, or loaded longer ago than FULL_RELOAD_MS, is loaded cold,
// without reading its entries one document each (FerretDB reads ~5,000 a
// second: 20 s for 100,000) where it can: its snapshot (store/lists.ts)
// and the changes since it was taken; else, for a list younger than the
// change records kept (less an hour's margin), every change since it was
// made; else the whole list. The reload after FULL_RELOAD_MS repairs a
// change written but never recorded (a crash between the two): a snapshot
// reads the entries themselves, and the sweep rebuilds those of lists of
// SNAPSHOT_MIN_ENTRIES or more daily; a smaller young list is repaired
// when it ages out of the records and is read whole.
//
// Memory is bounded by an entry budget: beyond it the projects used least
// recently go (a project over the budget alone is still served, then
// dropped when another is loaded).
import type { Clock } from '../clock.js';
import type { Store } from '../store/index.js';
import { CHANGES_KEPT_MS, type ListDoc, type ListEntryState } from '../store/lists.js';
import { ListIndex } from './listIndex.js';

/** What the rules engine asks of a project's lists. */
export interface ListLookup {
  has(list: string, value: string | number): boolean;
}

export const OVERLAP_MS = 60_000;
export const FULL_RELOAD_MS = 24 * 3600_000;
export const DEFAULT_ENTRY_BUDGET = 500_000;
/** A snapshot or list this much younger than the change records kept has all its changes since in them (the margin: the sweep's interval, clocks apart). */
export const HISTORY_MS = CHANGES_KEPT_MS - 3600_000;
/** Lists the snapshot sweep keeps a snapshot of: a smaller one reads whole in well under a second. */
export const SNAPSHOT_MIN_ENTRIES = 2000;
/** Lists a sweep run snapshots: each reads its list whole, seconds at 100,000 entries. */
const SNAPSHOTS_PER_SWEEP = 2;

interface HeldList {
  id: string;
  index: ListIndex;
}

interface Loaded {
  version: number;
  /** The clock when the load began: the next one reads what was written from OVERLAP_MS before it. */
  loadedAt: number;
  lists: Map<string, HeldList>;
  entries: number;
  lookup: ListLookup;
}

interface Slot {
  loaded: Loaded | null;
  loading: Promise<void> | null;
}

const EMPTY: ListLookup = { has: () => false };

export class ProjectLists {
  /** By project, least recently used first. */
  private readonly slots = new Map<string, Slot>();
  private held = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly entryBudget = DEFAULT_ENTRY_BUDGET,
  ) {}

  /** The project's lists as of `listsVersion` (its project document's; absent: 0). */
  async lookup(projectId: string, listsVersion: number): Promise<ListLookup> {
    // No change was ever made: the project has no lists.
    if (listsVersion === 0) return EMPTY;
    let slot = this.slots.get(projectId);
    if (slot?.loaded?.version === listsVersion) {
      this.touch(projectId, slot);
      return slot.loaded.lookup;
    }
    if (!slot) {
      slot = { loaded: null, loading: null };
      this.slots.set(projectId, slot);
    }
    // One load at a time per project: a caller that finds one running waits for it, then checks again.
    while (slot.loading) {
      await slot.loading.catch(() => {});
      if (slot.loaded?.version === listsVersion) return slot.loaded.lookup;
    }
    const s = slot;
    s.loading = this.load(projectId, s.loaded, listsVersion).then((loaded) => {
      // Counted only while the slot is held: `forget` may have dropped it meanwhile.
      if (this.slots.get(projectId) === s) this.held += loaded.entries - (s.loaded?.entries ?? 0);
      s.loaded = loaded;
    });
    try {
      await s.loading;
    } catch (err) {
      if (!s.loaded && this.slots.get(projectId) === s) this.slots.delete(projectId);
      throw err;
    } finally {
      s.loading = null;
    }
    if (this.slots.get(projectId) === s) this.touch(projectId, s);
    return s.loaded!.lookup;
  }

  /** Drops what this process holds of the project. */
  forget(projectId: string): void {
    const slot = this.slots.get(projectId);
    if (!slot) return;
    this.held -= slot.loaded?.entries ?? 0;
    this.slots.delete(projectId);
  }

  /** Entries held across projects, and one for each list. */
  get size(): number {
    return this.held;
  }

  private async load(projectId: string, before: Loaded | null, version: number): Promise<Loaded> {
    const loadedAt = this.clock.now();
    const since = before && loadedAt - before.loadedAt < FULL_RELOAD_MS ? before.loadedAt - OVERLAP_MS : null;
    const docs = await this.store.lists.ofProject(projectId);
    const lists = new Map<string, HeldList>();
    await Promise.all(docs.map(async (doc) => lists.set(doc.name, await this.loadList(doc, before?.lists.get(doc.name), since, loadedAt))));
    // A list counts one more, so that the empty lists of many projects are bounded too.
    let entries = 0;
    for (const l of lists.values()) entries += l.index.size + 1;
    const lookup: ListLookup = {
      has: (list, value) => lists.get(list)?.index.has(value, this.clock.now()) ?? false,
    };
    return { version, loadedAt, lists, entries, lookup };
  }

  /** The list's entries: what changed since `since` applied to what was held of it (the same list), else a cold load. */
  private async loadList(doc: ListDoc, held: HeldList | undefined, since: number | null, now: number): Promise<HeldList> {
    if (held && held.id === doc._id && since !== null) {
      held.index.apply(await this.store.lists.changesSince(doc._id, since));
      return held;
    }
    const index = new ListIndex(doc.kind);
    index.apply(await this.coldLoad(doc, now));
    return { id: doc._id, index };
  }

  /** Every entry of the list, in order: its snapshot and the changes since, else its whole history, else the entries themselves. */
  private async coldLoad(doc: ListDoc, now: number): Promise<ListEntryState[]> {
    const lists = this.store.lists;
    const snapshot = doc.snapshot;
    if (snapshot && snapshot.takenAt > now - HISTORY_MS) {
      const [values, changes] = await Promise.all([lists.snapshotOf(doc._id, snapshot), lists.changesSince(doc._id, snapshot.takenAt - OVERLAP_MS)]);
      if (values) return [...values, ...changes];
    }
    const created = doc.createdAt.getTime();
    if (created > now - HISTORY_MS) return lists.changesSince(doc._id, created - OVERLAP_MS);
    return lists.all(doc._id);
  }

  /** Marks the project used last, and drops the least recently used others while over the budget. */
  private touch(projectId: string, slot: Slot): void {
    this.slots.delete(projectId);
    this.slots.set(projectId, slot);
    for (const [id, other] of this.slots) {
      if (this.held <= this.entryBudget || other === slot) break;
      if (other.loading) continue;
      this.forget(id);
    }
  }
}

/**
 * The maintenance sweep that keeps snapshots: lists of SNAPSHOT_MIN_ENTRIES
 * or more without one, and lists whose snapshot is older than
 * FULL_RELOAD_MS (whatever their size now), a few a run, each read whole from its entries (the truth, not a cache). Taken at
 * the run's start, no later than the read begins: a change made during the
 * read is in the changes a load replays. How many it snapshotted.
 */
export function snapshotSweep(store: Store): (now: Date) => Promise<number> {
  return async (now) => {
    const takenAt = now.getTime();
    let taken = 0;
    for (const listId of await store.lists.dueForSnapshot(SNAPSHOT_MIN_ENTRIES, takenAt - FULL_RELOAD_MS, SNAPSHOTS_PER_SWEEP)) {
      if (await store.lists.putSnapshot(listId, takenAt, await store.lists.all(listId))) taken++;
    }
    return taken;
  };
}
