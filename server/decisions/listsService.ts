// A project's named lists (dashboard and /v1 routes): lists of one kind of
// value that rules test with `inList(name, value)`. Every change to what
// lookups see is written first, then the project's listsVersion is bumped:
// a process whose cache holds another version reads what changed on its
// next lookup (listCache.ts). Changes go to the audit log, an entries change
// summarised (counts and the first values), not value by value.
import { DECISION_LIMITS } from '../../contract/decisions.js';
import { ulid } from '../ids.js';
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { KeyedLock } from '../store/keyedLock.js';
import type { Store } from '../store/index.js';
import { entryId, type ListDoc, type ListEntryDoc, type ListEntryState, type ListKind } from '../store/lists.js';
import type { ProjectChanges } from '../projects/changes.js';
import { normalizeListValue } from './listValues.js';

/** The contract's caps (tests inject smaller ones). */
export const LIST_LIMITS = { lists: DECISION_LIMITS.lists, entries: DECISION_LIMITS.listEntries } as const;
/** Values of each kind of change the audit entry names. */
const AUDIT_VALUES = 10;

export interface EntryInput {
  value: string;
  note?: string | undefined;
  /** Unix ms from which the entry no longer matches. */
  expiresAt?: number | undefined;
}

export interface EntriesChange {
  add?: EntryInput[] | undefined;
  remove?: string[] | undefined;
}

export interface BadValue {
  field: 'add' | 'remove';
  index: number;
  value: string;
  error: string;
}

const listView = (l: ListDoc) => ({
  name: l.name,
  kind: l.kind,
  description: l.description,
  entries: l.entries,
  createdAt: l.createdAt.toISOString(),
  updatedAt: l.updatedAt.toISOString(),
});

const entryView = (e: ListEntryDoc) => ({ value: e.value, note: e.note, expiresAt: e.expiresAt, addedAt: new Date(e.addedAt).toISOString() });

const listNotFound = () => new ApiError('list_not_found');

export class ListsService {
  /** Per list: a change reads what the list holds, checks the cap and writes; two at once would count past it. */
  private readonly lock = new KeyedLock();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly limits: { lists: number; entries: number } = LIST_LIMITS,
    /** Tells every process of the instance that the project's lists changed (their caches read what changed on the next identify). */
    private readonly changes?: ProjectChanges,
  ) {}

  /** After a change is written: the project's listsVersion moves on, and every process drops its copy of the project. */
  private async changed(projectId: string): Promise<void> {
    await this.store.projects.bumpListsVersion(projectId);
    await this.changes?.announce(projectId);
  }

  private async project(accountId: string, projectId: string) {
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
  }

  private async listOf(accountId: string, projectId: string, name: string): Promise<ListDoc> {
    await this.project(accountId, projectId);
    const list = await this.store.lists.byName(projectId, name);
    if (!list || list.accountId !== accountId) throw listNotFound();
    return list;
  }

  async list(accountId: string, projectId: string) {
    await this.project(accountId, projectId);
    return (await this.store.lists.ofProject(projectId)).map(listView);
  }

  async create(accountId: string, projectId: string, input: { name: string; kind: ListKind; description: string }) {
    await this.project(accountId, projectId);
    const now = new Date(this.clock.now());
    const doc: ListDoc = { _id: `lst_${ulid(now.getTime())}`, accountId, projectId, ...input, entries: 0, createdAt: now, updatedAt: now };
    const outcome = await this.audit.change(accountId, 'list.create', { target: { type: 'list', id: doc._id }, after: { projectId, ...input } }, (stamp) =>
      this.store.lists.insertBounded(doc, this.limits.lists, stamp),
    );
    if (outcome === 'exists') throw new ApiError('list_exists', `A list named ${input.name} already exists`);
    if (outcome === 'full') throw new ApiError('too_many_lists', `A project can have at most ${this.limits.lists} lists`);
    await this.changed(projectId);
    return listView(doc);
  }

  async get(accountId: string, projectId: string, name: string) {
    return listView(await this.listOf(accountId, projectId, name));
  }

  /** The description (lookups do not read it: no version bump). */
  async update(accountId: string, projectId: string, name: string, patch: { description?: string | undefined }) {
    const before = await this.listOf(accountId, projectId, name);
    if (patch.description === undefined || patch.description === before.description) return listView(before);
    const description = patch.description;
    const after = await this.audit.change(
      accountId,
      'list.update',
      { target: { type: 'list', id: before._id }, before: { projectId, name, description: before.description }, after: { projectId, name, description } },
      (stamp) => this.store.lists.setDescription(before._id, description, new Date(this.clock.now()), stamp),
    );
    if (!after) throw listNotFound();
    return listView(after);
  }

  /** Deletes the list and its entries; rules naming it stop matching it. */
  async remove(accountId: string, projectId: string, name: string) {
    const list = await this.listOf(accountId, projectId, name);
    await this.audit.change(
      accountId,
      'list.delete',
      { target: { type: 'list', id: list._id }, before: { projectId, name, kind: list.kind, description: list.description, entries: list.entries } },
      (stamp) => this.lock.run(list._id, () => this.store.lists.delete(list._id, stamp)),
    );
    await this.changed(projectId);
    return listView(list);
  }

  /** A page of entries by value; `cursor` (the last value of the previous page) is present when there may be more. */
  async entries(accountId: string, projectId: string, name: string, q: { cursor?: string | undefined; limit: number; prefix?: string | undefined }) {
    const list = await this.listOf(accountId, projectId, name);
    const docs = await this.store.lists.page(list._id, { after: q.cursor, prefix: q.prefix && searchPrefix(list.kind, q.prefix), limit: q.limit + 1 });
    const page = docs.slice(0, q.limit);
    return { entries: page.map(entryView), ...(docs.length > q.limit && { cursor: page[page.length - 1]!.value }) };
  }

  /**
   * Adds (or replaces: an entry is its value with this note and expiry, none
   * when absent) and removes values; a value both added and removed stays.
   * Every value is checked against the list's kind first: one that does not
   * fit fails the whole change (400, each bad value by index), and so does a
   * change that would leave more than the limit (100,000; 409). Entries
   * given as they already are are not written again, nor audited.
   */
  async changeEntries(accountId: string, projectId: string, name: string, change: EntriesChange) {
    const list = await this.listOf(accountId, projectId, name);
    const { add, remove } = this.checked(list.kind, change);
    const { added, updated, removed, entries } = await this.lock.run(list._id, () => this.write(list, add, remove));
    if (add.size || remove.size) await this.changed(projectId);
    return { added, updated, removed, entries };
  }

  /** The change in canonical values, the last of a value's additions winning; 400 listing every value that does not fit the kind. */
  private checked(kind: ListKind, change: EntriesChange) {
    const bad: BadValue[] = [];
    const add = new Map<string, EntryInput>();
    change.add?.forEach((e, index) => {
      const n = normalizeListValue(kind, e.value);
      if ('error' in n) bad.push({ field: 'add', index, value: e.value, error: n.error });
      else add.set(n.value, e);
    });
    const remove = new Set<string>();
    change.remove?.forEach((value, index) => {
      const n = normalizeListValue(kind, value);
      if ('error' in n) bad.push({ field: 'remove', index, value, error: n.error });
      else if (!add.has(n.value)) remove.add(n.value);
    });
    if (bad.length) {
      const where = (b: BadValue) => (b.field === 'add' ? `add[${b.index}].value` : `remove[${b.index}]`);
      const more = bad.length > 1 ? ` (and ${bad.length - 1} more, in details)` : '';
      const details = bad.map((b) => ({ path: where(b), message: b.error }));
      throw new ApiError('invalid_list_entries', `${where(bad[0]!)}: ${bad[0]!.error}${more}`, { details });
    }
    return { add, remove };
  }

  /**
   * Under the list's lock: reads what the list holds of these values, checks
   * the cap, writes what differs, and records every value of the change for
   * the caches, also those that were already so: a change that failed
   * midway (written, not recorded) is completed by repeating it. Its audit
   * entry goes with the list's new count, the change's last write.
   */
  private async write(list: ListDoc, add: Map<string, EntryInput>, remove: Set<string>) {
    const now = this.clock.now();
    const held = new Map((await this.store.lists.entriesOf(list._id, [...add.keys(), ...remove])).map((e) => [e.value, e]));
    // Read again under the lock: a change that held it before may have changed the count, or deleted the list.
    const current = (await this.store.lists.byId(list._id))?.entries;
    if (current === undefined) throw listNotFound();
    const docs: ListEntryDoc[] = [];
    let updated = 0;
    for (const [value, input] of add) {
      const before = held.get(value);
      const note = input.note ?? '';
      const expiresAt = input.expiresAt ?? null;
      if (before && before.note === note && before.expiresAt === expiresAt) continue;
      if (before) updated++;
      docs.push({
        _id: entryId(list._id, value),
        listId: list._id,
        accountId: list.accountId,
        projectId: list.projectId,
        value,
        note,
        expiresAt,
        addedAt: before?.addedAt ?? now,
        updatedAt: now,
      });
    }
    const added = docs.length - updated;
    const removing = [...remove].filter((v) => held.has(v));
    const entries = current + added - removing.length;
    if (entries > this.limits.entries) {
      throw new ApiError('list_full', `The list holds ${current} entries: this change would make ${entries}, more than ${this.limits.entries}`);
    }
    const removed = await this.store.lists.remove(list._id, removing);
    await this.store.lists.put(
      docs,
      docs.filter((d) => held.has(d.value)).map((d) => d._id),
    );
    await this.store.lists.recordChanges(list._id, now, [
      ...[...remove].map((value): ListEntryState => ({ value, expiresAt: null, removed: true })),
      ...[...add].map(([value, input]) => ({ value, expiresAt: input.expiresAt ?? null })),
    ]);
    if (!docs.length && !removed) return { added, updated, removed, entries: current };
    const first = (values: Iterable<string>) => [...values].slice(0, AUDIT_VALUES);
    const after = await this.audit.change(
      list.accountId,
      'list.entries',
      {
        target: { type: 'list', id: list._id },
        after: { projectId: list.projectId, name: list.name, added, updated, removed, values: first(add.keys()), removedValues: first(remove) },
      },
      (stamp) => this.store.lists.changedEntries(list._id, added - removed, new Date(now), stamp),
    );
    return { added, updated, removed, entries: after?.entries ?? entries };
  }
}

/** A search prefix in the form values are kept in (countries upper case, ASNs as digits). */
function searchPrefix(kind: ListKind, prefix: string): string {
  if (kind === 'country') return prefix.toUpperCase();
  if (kind === 'asn') return prefix.replace(/^as/i, '');
  return prefix;
}
