// Project lists against the real database: the service (lists, entries in
// canonical form, bad values, the caps, isolation between accounts and
// projects, the audit log), the per-process cache (nothing read while the
// project's listsVersion is the one loaded; a change made in another
// process read on the next lookup; expiry by the injected clock; the entry
// budget), its cold loads (a young list from its change records, an older
// one from its snapshot and the changes since, else whole), the sweep of
// change records and the one that takes snapshots.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../server/errors.js';
import { AuditLog } from '../../../server/audit/log.js';
import { FULL_RELOAD_MS, HISTORY_MS, OVERLAP_MS, ProjectLists, SNAPSHOT_MIN_ENTRIES } from '../../../server/decisions/listCache.js';
import { ListIndex } from '../../../server/decisions/listIndex.js';
import { ListsService } from '../../../server/decisions/listsService.js';
import { ulid } from '../../../server/ids.js';
import { defaultSweeps } from '../../../server/maintenance.js';
import type { Store } from '../../../server/store/index.js';
import { CHANGES_KEPT_MS } from '../../../server/store/lists.js';
import { createHarness, type Harness } from '../../support/harness.js';

let h: Harness;
let other: Store;
let commands: { name: string; collection: string }[] = [];
let counting = false;
let service: ListsService;
/** The same service in another process. */
let serviceThere: ListsService;
/** Without the test caps, for lists big enough to snapshot. */
let bigService: ListsService;
let audit: AuditLog;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, {}, (c) => {
    if (counting) commands.push(c);
  });
  other = (await h.otherProcess()).store;
  audit = new AuditLog(h.store, h.clock);
  service = new ListsService(h.store, h.clock, audit, { lists: 3, entries: 10 });
  serviceThere = new ListsService(other, h.clock, new AuditLog(other, h.clock), { lists: 3, entries: 10 });
  bigService = new ListsService(h.store, h.clock, audit, { lists: 50, entries: 100_000 });
});
afterAll(() => h.close());

async function project(accountId = `acc_${ulid()}`) {
  const projectId = `prj_${ulid()}`;
  await h.store.projects.insert({ _id: projectId, accountId, name: 'p', allowedDomains: [], createdAt: new Date(h.clock.now()) });
  return { accountId, projectId };
}

/** The project's listsVersion as stored (not this process's cached project). */
const version = async (projectId: string) =>
  (await h.store.db.collection<{ _id: string; listsVersion?: number }>('projects').findOne({ _id: projectId }))?.listsVersion ?? 0;

/** The command names a call sends to the database. */
async function commandsOf(fn: () => Promise<unknown>): Promise<string[]> {
  commands = [];
  counting = true;
  try {
    await fn();
  } finally {
    counting = false;
  }
  return commands.map((c) => `${c.name} ${c.collection}`);
}

/** A linkedId list of u0 … u<n-1>; its id. */
async function bigList(p: { accountId: string; projectId: string }, name: string, n: number): Promise<string> {
  await bigService.create(p.accountId, p.projectId, { name, kind: 'linkedId', description: '' });
  await bigService.changeEntries(p.accountId, p.projectId, name, { add: Array.from({ length: n }, (_, i) => ({ value: `u${i}` })) });
  return (await h.store.lists.byName(p.projectId, name))!._id;
}

/** One run of the snapshot sweep, at the clock's time. Tests delete their big lists, so that the next finds only its own due. */
const snapshotSweep = () => defaultSweeps(h.store, 90).listSnapshots!(new Date(h.clock.now()));

/** The `_id`s of the list's snapshot documents. */
const snapshotIds = async (listId: string) =>
  (
    await h.store.db
      .collection<{ _id: string }>('listSnapshots')
      .find({ _id: { $gt: `${listId}|`, $lt: `${listId}}` } })
      .sort({ _id: 1 })
      .toArray()
  ).map((d) => d._id);

async function apiError(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

const IQ = (n: number) =>
  `iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y${String(n)
    .padStart(2, '0')
    .replace(/[ILOU]/g, 'X')}`;

describe('lists', () => {
  it('are made, listed, described and deleted; names are unique per project, and a project holds a bounded number', async () => {
    const { accountId, projectId } = await project();
    const made = await service.create(accountId, projectId, { name: 'blocked-ips', kind: 'ip', description: 'abuse' });
    expect(made).toEqual({
      name: 'blocked-ips',
      kind: 'ip',
      description: 'abuse',
      entries: 0,
      createdAt: new Date(h.clock.now()).toISOString(),
      updatedAt: new Date(h.clock.now()).toISOString(),
    });
    expect(await version(projectId)).toBe(1);
    const dup = await apiError(service.create(accountId, projectId, { name: 'blocked-ips', kind: 'asn', description: '' }));
    expect([dup.status, dup.code, dup.message]).toEqual([409, 'list_exists', 'A list named blocked-ips already exists']);

    await service.create(accountId, projectId, { name: 'b', kind: 'asn', description: '' });
    await service.create(accountId, projectId, { name: 'a', kind: 'country', description: '' });
    const full = await apiError(service.create(accountId, projectId, { name: 'c', kind: 'country', description: '' }));
    expect([full.status, full.code, full.message]).toEqual([409, 'too_many_lists', 'A project can have at most 3 lists']);
    expect((await service.list(accountId, projectId)).map((l) => l.name)).toEqual(['a', 'b', 'blocked-ips']);

    h.clock.advance(1000);
    const described = await service.update(accountId, projectId, 'a', { description: 'sanctioned' });
    expect(described.description).toBe('sanctioned');
    expect(described.updatedAt).toBe(new Date(h.clock.now()).toISOString());
    // A description is not read by lookups: the version stays.
    expect(await version(projectId)).toBe(3);
    expect(await service.update(accountId, projectId, 'a', {})).toEqual(described);

    await service.remove(accountId, projectId, 'a');
    expect(await version(projectId)).toBe(4);
    expect((await apiError(service.get(accountId, projectId, 'a'))).code).toBe('list_not_found');
    // Room again for another.
    await service.create(accountId, projectId, { name: 'c', kind: 'country', description: '' });

    const entries = (await audit.page(accountId, { limit: 20 })).entries.map((e) => [e.action, e.before, e.after]);
    expect(entries).toContainEqual(['list.update', { projectId, name: 'a', description: '' }, { projectId, name: 'a', description: 'sanctioned' }]);
    expect(entries).toContainEqual(['list.delete', { projectId, name: 'a', kind: 'country', description: 'sanctioned', entries: 0 }, null]);
    expect(entries).toContainEqual(['list.create', null, { projectId, name: 'blocked-ips', kind: 'ip', description: 'abuse' }]);
  });

  it("are another account's and another project's business: 404", async () => {
    const a = await project();
    const b = await project();
    const sibling = await project(a.accountId);
    await service.create(a.accountId, a.projectId, { name: 'vip', kind: 'linkedId', description: '' });
    await service.changeEntries(a.accountId, a.projectId, 'vip', { add: [{ value: 'user-1' }] });
    // Another account naming a's project.
    for (const call of [
      () => service.list(b.accountId, a.projectId),
      () => service.get(b.accountId, a.projectId, 'vip'),
      () => service.entries(b.accountId, a.projectId, 'vip', { limit: 10 }),
      () => service.changeEntries(b.accountId, a.projectId, 'vip', { remove: ['user-1'] }),
      () => service.remove(b.accountId, a.projectId, 'vip'),
      () => service.create(b.accountId, a.projectId, { name: 'x', kind: 'ip', description: '' }),
    ]) {
      const err = await apiError(call());
      expect([err.status, err.code]).toEqual([404, 'project_not_found']);
    }
    // The same account's other project has no such list.
    for (const call of [
      () => service.get(a.accountId, sibling.projectId, 'vip'),
      () => service.changeEntries(a.accountId, sibling.projectId, 'vip', { add: [{ value: 'user-2' }] }),
      () => service.update(a.accountId, sibling.projectId, 'vip', { description: 'x' }),
    ]) {
      const err = await apiError(call());
      expect([err.status, err.code, err.message]).toEqual([404, 'list_not_found', 'List not found']);
    }
    // The same name elsewhere is another list.
    await service.create(a.accountId, sibling.projectId, { name: 'vip', kind: 'linkedId', description: '' });
    expect((await service.get(a.accountId, sibling.projectId, 'vip')).entries).toBe(0);
    expect((await service.get(a.accountId, a.projectId, 'vip')).entries).toBe(1);
    const cache = new ProjectLists(h.store, h.clock);
    expect((await cache.lookup(sibling.projectId, await version(sibling.projectId))).has('vip', 'user-1')).toBe(false);
    expect((await cache.lookup(a.projectId, await version(a.projectId))).has('vip', 'user-1')).toBe(true);
  });
});

describe('entries', () => {
  it('are kept in canonical form; re-adding changes note and expiry; a value both added and removed stays', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'nets', kind: 'ip', description: '' });
    const at = h.clock.now();
    const r = await service.changeEntries(accountId, projectId, 'nets', {
      add: [
        { value: '10.1.2.3/8', note: 'corp' },
        { value: '::ffff:192.0.2.1' },
        { value: '2001:DB8::/32', expiresAt: at + 60_000 },
        { value: '10.0.0.0/8', note: 'again' },
      ],
    });
    expect(r).toEqual({ added: 3, updated: 0, removed: 0, entries: 3 });
    const page = await service.entries(accountId, projectId, 'nets', { limit: 10 });
    expect(page).toEqual({
      entries: [
        { value: '10.0.0.0/8', note: 'again', expiresAt: null, addedAt: new Date(at).toISOString() },
        { value: '192.0.2.1', note: '', expiresAt: null, addedAt: new Date(at).toISOString() },
        { value: '2001:db8::/32', note: '', expiresAt: at + 60_000, addedAt: new Date(at).toISOString() },
      ],
    });
    const v = await version(projectId);

    // The same again: nothing changes and nothing is audited. The values are recorded for the caches all the same
    // (a change that failed after writing, before recording, is completed by repeating it).
    expect(await service.changeEntries(accountId, projectId, 'nets', { add: [{ value: '10.0.0.0/8', note: 'again' }] })).toEqual({
      added: 0,
      updated: 0,
      removed: 0,
      entries: 3,
    });
    expect(await version(projectId)).toBe(v + 1);

    h.clock.advance(1000);
    // An entry is its value with the note and expiry given (none when absent); it keeps when it was added.
    expect(
      await service.changeEntries(accountId, projectId, 'nets', {
        add: [{ value: '2001:db8::/32' }, { value: '198.51.100.0/24' }],
        remove: ['192.0.2.1', '203.0.113.9', '2001:db8:0::/32'],
      }),
    ).toEqual({ added: 1, updated: 1, removed: 1, entries: 3 });
    expect(await version(projectId)).toBe(v + 2);
    const after = (await service.entries(accountId, projectId, 'nets', { limit: 10 })).entries;
    expect(after.map((e) => [e.value, e.expiresAt, e.addedAt])).toEqual([
      ['10.0.0.0/8', null, new Date(at).toISOString()],
      ['198.51.100.0/24', null, new Date(at + 1000).toISOString()],
      ['2001:db8::/32', null, new Date(at).toISOString()],
    ]);
    expect((await service.get(accountId, projectId, 'nets')).entries).toBe(3);

    const logged = (await audit.page(accountId, { limit: 5 })).entries.filter((e) => e.action === 'list.entries');
    expect(logged.map((e) => e.after)).toEqual([
      { projectId, name: 'nets', added: 1, updated: 1, removed: 1, values: ['2001:db8::/32', '198.51.100.0/24'], removedValues: ['192.0.2.1', '203.0.113.9'] },
      { projectId, name: 'nets', added: 3, updated: 0, removed: 0, values: ['10.0.0.0/8', '192.0.2.1', '2001:db8::/32'], removedValues: [] },
    ]);
    expect(logged[0]!.target).toEqual({ type: 'list', id: expect.stringMatching(/^lst_/) });
  });

  it('that do not fit the kind fail the whole change, each named by its index', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'asns', kind: 'asn', description: '' });
    const v = await version(projectId);
    const err = await apiError(
      service.changeEntries(accountId, projectId, 'asns', { add: [{ value: 'AS13335' }, { value: 'cloudflare' }, { value: '0' }], remove: ['as1', 'x'] }),
    );
    expect([err.status, err.code, err.message]).toEqual([
      400,
      'invalid_list_entries',
      'add[1].value: not an AS number (13335 or AS13335, 1 to 4294967295) (and 2 more, in details)',
    ]);
    expect(err.body()).toMatchObject({
      details: [
        { path: 'add[1].value', message: 'not an AS number (13335 or AS13335, 1 to 4294967295)' },
        { path: 'add[2].value', message: 'not an AS number (13335 or AS13335, 1 to 4294967295)' },
        { path: 'remove[1]', message: 'not an AS number (13335 or AS13335, 1 to 4294967295)' },
      ],
    });
    expect(await version(projectId)).toBe(v);
    expect((await service.entries(accountId, projectId, 'asns', { limit: 10 })).entries).toEqual([]);
    const one = await apiError(service.changeEntries(accountId, projectId, 'asns', { remove: ['x'] }));
    expect(one.message).toBe('remove[0]: not an AS number (13335 or AS13335, 1 to 4294967295)');
  });

  it('stop at the cap: a change that would pass it writes nothing', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'c', kind: 'country', description: '' });
    const eight = ['AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO'];
    await service.changeEntries(accountId, projectId, 'c', { add: eight.map((value) => ({ value })) });
    const v = await version(projectId);
    const err = await apiError(service.changeEntries(accountId, projectId, 'c', { add: [{ value: 'us' }, { value: 'de' }, { value: 'fr' }] }));
    expect([err.status, err.code, err.message]).toEqual([409, 'list_full', 'The list holds 8 entries: this change would make 11, more than 10']);
    expect((await service.get(accountId, projectId, 'c')).entries).toBe(8);
    expect(await version(projectId)).toBe(v);
    // Removals in the same change make room; updating held values takes none.
    expect(await service.changeEntries(accountId, projectId, 'c', { add: [{ value: 'us' }, { value: 'de' }, { value: 'fr' }], remove: ['AD'] })).toEqual({
      added: 3,
      updated: 0,
      removed: 1,
      entries: 10,
    });
    expect(await service.changeEntries(accountId, projectId, 'c', { add: [{ value: 'US', note: 'x' }] })).toMatchObject({ updated: 1, entries: 10 });
    expect((await apiError(service.changeEntries(accountId, projectId, 'c', { add: [{ value: 'GB' }] }))).code).toBe('list_full');
  });

  it('written by two processes at once: an entry the other inserted first is replaced', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'ids', kind: 'linkedId', description: '' });
    const list = (await h.store.lists.byName(projectId, 'ids'))!;
    const doc = (value: string, note: string) => ({
      _id: `${list._id}|${value}`,
      listId: list._id,
      accountId,
      projectId,
      value,
      note,
      expiresAt: null,
      addedAt: 1,
      updatedAt: 1,
    });
    await other.lists.put([doc('b', 'theirs')], []);
    // This process read no entry 'b' and inserts it as new, beside 'a' and 'c'.
    await h.store.lists.put([doc('a', 'mine'), doc('b', 'mine'), doc('c', 'mine')], []);
    expect((await h.store.lists.page(list._id, { limit: 10 })).map((e) => [e.value, e.note])).toEqual([
      ['a', 'mine'],
      ['b', 'mine'],
      ['c', 'mine'],
    ]);
  });

  it('page by value, after a cursor, by prefix (in the kind’s form)', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'c', kind: 'country', description: '' });
    await service.create(accountId, projectId, { name: 'ids', kind: 'linkedId', description: '' });
    await service.changeEntries(accountId, projectId, 'c', { add: ['DE', 'DK', 'FR', 'GB', 'US', 'UA'].map((value) => ({ value })) });
    const values = async (q: Parameters<ListsService['entries']>[3]) => {
      const r = await service.entries(accountId, projectId, 'c', q);
      return [r.entries.map((e) => e.value), r.cursor];
    };
    expect(await values({ limit: 4 })).toEqual([['DE', 'DK', 'FR', 'GB'], 'GB']);
    expect(await values({ limit: 4, cursor: 'GB' })).toEqual([['UA', 'US'], undefined]);
    expect(await values({ limit: 2, cursor: 'DK' })).toEqual([['FR', 'GB'], 'GB']);
    expect(await values({ limit: 10, prefix: 'u' })).toEqual([['UA', 'US'], undefined]);
    expect(await values({ limit: 1, prefix: 'd' })).toEqual([['DE'], 'DE']);
    expect(await values({ limit: 1, prefix: 'd', cursor: 'DE' })).toEqual([['DK'], undefined]);
    // A cursor before the prefix starts the prefix.
    expect(await values({ limit: 5, prefix: 'u', cursor: 'AA' })).toEqual([['UA', 'US'], undefined]);
    expect(await values({ limit: 5, prefix: 'x' })).toEqual([[], undefined]);
    // Any text: values past the prefix's last character, and characters outside the BMP.
    await service.changeEntries(accountId, projectId, 'ids', { add: ['a', 'a\u{10ffff}', 'a\u{1f600}x', 'ab', 'b', '\u{1f600}'].map((value) => ({ value })) });
    const ids = async (prefix: string) => (await service.entries(accountId, projectId, 'ids', { limit: 10, prefix })).entries.map((e) => e.value);
    expect(await ids('a')).toEqual(['a', 'ab', 'a\u{1f600}x', 'a\u{10ffff}']);
    expect(await ids('a\u{1f600}')).toEqual(['a\u{1f600}x']);
    expect(await ids('\u{1f600}')).toEqual(['\u{1f600}']);
  });
});

describe('the lists cache', () => {
  it('reads nothing while the version is the one loaded, and what changed when it is not, also when another process made the change', async () => {
    const { accountId, projectId } = await project();
    const cache = new ProjectLists(h.store, h.clock);
    // No list was ever made: nothing to read.
    expect(await commandsOf(() => cache.lookup(projectId, 0))).toEqual([]);
    expect((await cache.lookup(projectId, 0)).has('ips', '10.0.0.1')).toBe(false);

    await service.create(accountId, projectId, { name: 'ips', kind: 'ip', description: '' });
    await service.create(accountId, projectId, { name: 'ids', kind: 'visitorId', description: '' });
    await service.changeEntries(accountId, projectId, 'ips', { add: [{ value: '10.0.0.0/8' }, { value: '2001:db8::/32' }] });
    let v = await version(projectId);
    // Young lists: their change records hold their whole history.
    expect(await commandsOf(() => cache.lookup(projectId, v))).toEqual(['find lists', 'find listChanges', 'find listChanges']);
    let lookup = await cache.lookup(projectId, v);
    expect(lookup.has('ips', '10.20.30.40')).toBe(true);
    expect(lookup.has('ips', '2001:db8::5')).toBe(true);
    expect(lookup.has('ids', IQ(1))).toBe(false);
    expect(lookup.has('nope', '10.20.30.40')).toBe(false);
    expect(await commandsOf(async () => (await cache.lookup(projectId, v)).has('ips', '10.1.1.1'))).toEqual([]);

    // Changes made in another process: the next lookup with the new version reads their change records.
    h.clock.advance(10_000);
    await serviceThere.changeEntries(accountId, projectId, 'ips', { remove: ['10.0.0.0/8'], add: [{ value: '10.1.0.0/16' }] });
    await serviceThere.changeEntries(accountId, projectId, 'ids', { add: [{ value: IQ(1) }] });
    expect(lookup.has('ips', '10.20.30.40')).toBe(true);
    v = await version(projectId);
    expect(await commandsOf(() => cache.lookup(projectId, v))).toEqual(['find lists', 'find listChanges', 'find listChanges']);
    lookup = await cache.lookup(projectId, v);
    expect(lookup.has('ips', '10.20.30.40')).toBe(false);
    expect(lookup.has('ips', '10.1.30.40')).toBe(true);
    expect(lookup.has('ids', IQ(1))).toBe(true);
    // An older version read elsewhere is loaded too (versions are compared, not ordered).
    expect(await commandsOf(() => cache.lookup(projectId, v - 1))).not.toEqual([]);
  });

  it('reads the change records of each list since its load began, less the overlap', async () => {
    const { accountId, projectId } = await project();
    const cache = new ProjectLists(h.store, h.clock);
    await service.create(accountId, projectId, { name: 'ids', kind: 'visitorId', description: '' });
    await service.changeEntries(accountId, projectId, 'ids', { add: [{ value: IQ(2) }] });
    await cache.lookup(projectId, await version(projectId));
    h.clock.advance(OVERLAP_MS * 3);
    await service.changeEntries(accountId, projectId, 'ids', { add: [{ value: IQ(3) }] });
    const v = await version(projectId);
    expect(await commandsOf(() => cache.lookup(projectId, v))).toEqual(['find lists', 'find listChanges']);
    expect((await cache.lookup(projectId, v)).has('ids', IQ(3))).toBe(true);
  });

  it('sees a write in flight while it loaded: records from up to a minute before the load began are read again', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'ids', kind: 'visitorId', description: '' });
    const list = (await h.store.lists.byName(projectId, 'ids'))!;
    const cache = new ProjectLists(h.store, h.clock);
    const v = await version(projectId);
    // Another process's write began 30 s ago; its record lands after this process loaded.
    const began = h.clock.now() - 30_000;
    await cache.lookup(projectId, v);
    await h.store.lists.recordChanges(list._id, began, [{ value: IQ(4), expiresAt: null }]);
    await h.store.projects.bumpListsVersion(projectId);
    expect((await cache.lookup(projectId, v + 1)).has('ids', IQ(4))).toBe(true);
  });

  it('learns of a change that was written but not recorded when it is repeated', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'ids', kind: 'linkedId', description: '' });
    const list = (await h.store.lists.byName(projectId, 'ids'))!;
    const cache = new ProjectLists(h.store, h.clock);
    const v = await version(projectId);
    expect((await cache.lookup(projectId, v)).has('ids', 'u9')).toBe(false);
    // What a change that failed after writing its entry leaves: the entry, no record, no new version.
    const at = h.clock.now();
    await h.store.lists.put(
      [{ _id: `${list._id}|u9`, listId: list._id, accountId, projectId, value: 'u9', note: '', expiresAt: null, addedAt: at, updatedAt: at }],
      [],
    );
    expect(await service.changeEntries(accountId, projectId, 'ids', { add: [{ value: 'u9' }] })).toEqual({ added: 0, updated: 0, removed: 0, entries: 0 });
    expect((await cache.lookup(projectId, await version(projectId))).has('ids', 'u9')).toBe(true);
  });

  it('honours expiry by the injected clock', async () => {
    const { accountId, projectId } = await project();
    const cache = new ProjectLists(h.store, h.clock);
    await service.create(accountId, projectId, { name: 'ids', kind: 'linkedId', description: '' });
    await service.changeEntries(accountId, projectId, 'ids', { add: [{ value: 'u1', expiresAt: h.clock.now() + 5000 }, { value: 'u2' }] });
    const lookup = await cache.lookup(projectId, await version(projectId));
    expect(lookup.has('ids', 'u1')).toBe(true);
    h.clock.advance(5000);
    expect(lookup.has('ids', 'u1')).toBe(false);
    expect(lookup.has('ids', 'u2')).toBe(true);
  });

  it('drops a deleted list, and never mixes a list made again under its name with the old one', async () => {
    const { accountId, projectId } = await project();
    const cache = new ProjectLists(other, h.clock);
    await service.create(accountId, projectId, { name: 'l', kind: 'linkedId', description: '' });
    await service.changeEntries(accountId, projectId, 'l', { add: [{ value: 'old' }] });
    expect((await cache.lookup(projectId, await version(projectId))).has('l', 'old')).toBe(true);
    await service.remove(accountId, projectId, 'l');
    expect((await cache.lookup(projectId, await version(projectId))).has('l', 'old')).toBe(false);
    await service.create(accountId, projectId, { name: 'l', kind: 'linkedId', description: '' });
    await service.changeEntries(accountId, projectId, 'l', { add: [{ value: 'new' }] });
    const lookup = await cache.lookup(projectId, await version(projectId));
    expect([lookup.has('l', 'old'), lookup.has('l', 'new')]).toEqual([false, true]);
    // One entry and the list.
    expect(cache.size).toBe(2);
  });

  it('loads a list cold again when it was loaded longer ago than FULL_RELOAD_MS: an entry written but never recorded is seen once a snapshot has read it', async () => {
    const p = await project();
    const listId = await bigList(p, 'l', SNAPSHOT_MIN_ENTRIES);
    const cache = new ProjectLists(h.store, h.clock);
    await cache.lookup(p.projectId, await version(p.projectId));
    // What a change that failed after writing its entry leaves: the entry, no record.
    const at = h.clock.now();
    const doc = { listId, accountId: p.accountId, projectId: p.projectId, note: '', expiresAt: null, addedAt: at, updatedAt: at };
    await h.store.lists.put([{ ...doc, _id: `${listId}|lost`, value: 'lost' }], []);
    await bigService.changeEntries(p.accountId, p.projectId, 'l', { add: [{ value: 'seen' }] });
    let lookup = await cache.lookup(p.projectId, await version(p.projectId));
    expect([lookup.has('l', 'lost'), lookup.has('l', 'seen')]).toEqual([false, true]);

    h.clock.advance(FULL_RELOAD_MS);
    expect(await snapshotSweep()).toBe(1);
    await bigService.changeEntries(p.accountId, p.projectId, 'l', { add: [{ value: 'later' }] });
    const v = await version(p.projectId);
    // The list is young, but its snapshot comes first: it read the entries.
    expect((await commandsOf(() => cache.lookup(p.projectId, v))).sort()).toEqual(['find listChanges', 'find listSnapshots', 'find lists']);
    lookup = await cache.lookup(p.projectId, v);
    expect([lookup.has('l', 'lost'), lookup.has('l', 'seen'), lookup.has('l', 'later'), lookup.has('l', 'u1999')]).toEqual([true, true, true, true]);
    await bigService.remove(p.accountId, p.projectId, 'l');
  });

  it('loads a project once for callers that ask at the same time', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'l', kind: 'linkedId', description: '' });
    await service.changeEntries(accountId, projectId, 'l', { add: [{ value: 'a' }] });
    const cache = new ProjectLists(h.store, h.clock);
    const v = await version(projectId);
    const read = await commandsOf(() => Promise.all([cache.lookup(projectId, v), cache.lookup(projectId, v), cache.lookup(projectId, v)]));
    expect(read).toEqual(['find lists', 'find listChanges']);
  });

  it('keeps to its entry budget, dropping the projects used least recently', async () => {
    const cache = new ProjectLists(h.store, h.clock, 7);
    const projects = [];
    for (let i = 0; i < 3; i++) {
      const p = await project();
      await service.create(p.accountId, p.projectId, { name: 'l', kind: 'linkedId', description: '' });
      await service.changeEntries(p.accountId, p.projectId, 'l', { add: ['a', 'b', 'c'].map((value) => ({ value })) });
      projects.push({ ...p, v: await version(p.projectId) });
    }
    const [p0, p1, p2] = projects as [(typeof projects)[0], (typeof projects)[0], (typeof projects)[0]];
    // Three entries and the list.
    await cache.lookup(p0.projectId, p0.v);
    expect(cache.size).toBe(4);
    await cache.lookup(p1.projectId, p1.v);
    // Over the budget: p0 goes, p1 (just loaded) stays.
    expect(cache.size).toBe(4);
    expect(await commandsOf(() => cache.lookup(p1.projectId, p1.v))).toEqual([]);
    expect(await commandsOf(() => cache.lookup(p0.projectId, p0.v))).not.toEqual([]);
    await cache.lookup(p2.projectId, p2.v);
    expect(await commandsOf(() => cache.lookup(p2.projectId, p2.v))).toEqual([]);
    cache.forget(p2.projectId);
    expect(cache.size).toBe(0);
    expect(await commandsOf(() => cache.lookup(p2.projectId, p2.v))).not.toEqual([]);
  });
});

describe('cold loads', () => {
  it('of a young list replay its change records since it was made, not its entries, and find what a whole read finds', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'ips', kind: 'ip', description: '' });
    const list = (await h.store.lists.byName(projectId, 'ips'))!;
    await service.changeEntries(accountId, projectId, 'ips', {
      add: [{ value: '10.0.0.0/8' }, { value: '192.0.2.1', expiresAt: h.clock.now() + 60_000 }, { value: '2001:db8::/32' }, { value: '198.51.100.7' }],
    });
    // Days later, in another process: removals, an expiry moved, a range that expires.
    h.clock.advance(HISTORY_MS / 2);
    await serviceThere.changeEntries(accountId, projectId, 'ips', {
      remove: ['10.0.0.0/8', '198.51.100.7'],
      add: [{ value: '10.1.0.0/16', expiresAt: h.clock.now() + 60_000 }, { value: '192.0.2.1' }],
    });
    h.clock.advance(1000);
    await service.changeEntries(accountId, projectId, 'ips', { add: [{ value: '198.51.100.7', expiresAt: h.clock.now() + 30_000 }] });

    const cache = new ProjectLists(h.store, h.clock);
    const v = await version(projectId);
    expect(await commandsOf(() => cache.lookup(projectId, v))).toEqual(['find lists', 'find listChanges']);
    const lookup = await cache.lookup(projectId, v);
    const whole = new ListIndex('ip');
    whole.apply(await h.store.lists.all(list._id));
    const probes = ['10.2.3.4', '10.1.2.3', '192.0.2.1', '198.51.100.7', '2001:db8::1', '8.8.8.8'];
    const seen = () => probes.map((a) => lookup.has('ips', a));
    expect(seen()).toEqual([false, true, true, true, true, false]);
    expect(seen()).toEqual(probes.map((a) => whole.has(a, h.clock.now())));
    h.clock.advance(60_000);
    expect(seen()).toEqual([false, false, true, false, true, false]);
    expect(seen()).toEqual(probes.map((a) => whole.has(a, h.clock.now())));

    // Once its first records may have been swept, a list without a snapshot is read whole.
    h.clock.set(list.createdAt.getTime() + HISTORY_MS);
    expect(await commandsOf(() => new ProjectLists(h.store, h.clock).lookup(projectId, v))).toEqual(['find lists', 'find listEntries']);
  });

  it('of an older list read its snapshot and the changes since; one taken longer ago than the records kept is not used', async () => {
    const p = await project();
    await bigList(p, 'l', SNAPSHOT_MIN_ENTRIES);
    h.clock.advance(HISTORY_MS);
    await bigService.changeEntries(p.accountId, p.projectId, 'l', { add: [{ value: 'u1', expiresAt: h.clock.now() + 10 * OVERLAP_MS }] });
    // The expiry reaches the load through the snapshot alone.
    h.clock.advance(2 * OVERLAP_MS);
    expect(await snapshotSweep()).toBe(1);
    const takenAt = h.clock.now();
    h.clock.advance(1000);
    await bigService.changeEntries(p.accountId, p.projectId, 'l', { add: [{ value: 'after' }], remove: ['u2'] });
    const v = await version(p.projectId);

    const cache = new ProjectLists(h.store, h.clock);
    expect((await commandsOf(() => cache.lookup(p.projectId, v))).sort()).toEqual(['find listChanges', 'find listSnapshots', 'find lists']);
    const lookup = await cache.lookup(p.projectId, v);
    const seen = () => ['u0', 'u1', 'u2', 'u1999', 'after'].map((x) => lookup.has('l', x));
    expect(seen()).toEqual([true, true, false, true, true]);
    h.clock.advance(10 * OVERLAP_MS);
    expect(seen()).toEqual([true, false, false, true, true]);

    h.clock.set(takenAt + HISTORY_MS);
    const reads = await commandsOf(() => new ProjectLists(h.store, h.clock).lookup(p.projectId, v));
    expect(reads.filter((r) => r.startsWith('find'))).toEqual(['find lists', 'find listEntries', 'find listEntries']);
    await bigService.remove(p.accountId, p.projectId, 'l');
  });
});

describe('snapshots', () => {
  it('are taken of lists of 2,000 entries or more, two a sweep, in chunks named on the list (not in its API view); one missing a chunk is not used', async () => {
    const p = await project();
    const a = await bigList(p, 'a', SNAPSHOT_MIN_ENTRIES);
    const b = await bigList(p, 'b', 5001);
    const c = await bigList(p, 'c', SNAPSHOT_MIN_ENTRIES);
    const small = await bigList(p, 'small', SNAPSHOT_MIN_ENTRIES - 1);
    h.clock.advance(HISTORY_MS);
    expect([await snapshotSweep(), await snapshotSweep(), await snapshotSweep()]).toEqual([2, 1, 0]);
    const now = h.clock.now();
    const snapshot = async (listId: string) => (await h.store.lists.byId(listId))!.snapshot;
    expect([await snapshot(a), await snapshot(b), await snapshot(c), await snapshot(small)]).toEqual([
      { takenAt: now, chunks: 1 },
      { takenAt: now, chunks: 2 },
      { takenAt: now, chunks: 1 },
      undefined,
    ]);
    expect(await snapshotIds(b)).toEqual([`${b}|${now}|0000`, `${b}|${now}|0001`]);
    expect(await snapshotIds(small)).toEqual([]);
    expect(Object.keys(await bigService.get(p.accountId, p.projectId, 'b'))).toEqual(['name', 'kind', 'description', 'entries', 'createdAt', 'updatedAt']);

    // Chunks hold values in `_id` order: the last, alone in the second chunk, is u999.
    await h.store.db.collection<{ _id: string }>('listSnapshots').deleteOne({ _id: `${b}|${now}|0001` });
    const v = await version(p.projectId);
    const reads = await commandsOf(() => new ProjectLists(h.store, h.clock).lookup(p.projectId, v));
    // a and c from their snapshots; b, whose snapshot lacks a chunk, and small, which has none, whole.
    expect(reads.filter((r) => r === 'find listSnapshots')).toHaveLength(3);
    expect(reads.filter((r) => r === 'find listEntries')).toHaveLength(4);
    const lookup = await new ProjectLists(h.store, h.clock).lookup(p.projectId, v);
    expect(Array.from({ length: 5001 }, (_, i) => lookup.has('b', `u${i}`)).every(Boolean)).toBe(true);

    for (const name of ['a', 'b', 'c', 'small']) await bigService.remove(p.accountId, p.projectId, name);
    // Deleting a list deletes its snapshot.
    expect([...(await snapshotIds(a)), ...(await snapshotIds(b)), ...(await snapshotIds(c))]).toEqual([]);
  });

  it('are taken again after a day, the newer replacing the older, also of a list that shrank below the threshold; one that lost to a newer is deleted', async () => {
    const p = await project();
    const listId = await bigList(p, 'l', SNAPSHOT_MIN_ENTRIES);
    expect(await snapshotSweep()).toBe(1);
    const first = h.clock.now();
    h.clock.advance(FULL_RELOAD_MS);
    expect(await snapshotSweep()).toBe(0);
    h.clock.advance(1);
    expect(await snapshotSweep()).toBe(1);
    const second = h.clock.now();
    expect((await h.store.lists.byId(listId))!.snapshot).toEqual({ takenAt: second, chunks: 1 });
    expect(await snapshotIds(listId)).toEqual([`${listId}|${second}|0000`]);
    expect(second).toBeGreaterThan(first);

    // A sweep elsewhere that read the list before this one, finishing after it.
    expect(await h.store.lists.putSnapshot(listId, second - 1, [{ value: 'stale', expiresAt: null }])).toBe(false);
    expect((await h.store.lists.byId(listId))!.snapshot).toEqual({ takenAt: second, chunks: 1 });
    expect(await snapshotIds(listId)).toEqual([`${listId}|${second}|0000`]);

    // A list that shrank below the threshold keeps a current snapshot: loads still read it.
    await bigService.changeEntries(p.accountId, p.projectId, 'l', { remove: ['u0', 'u1'] });
    h.clock.advance(FULL_RELOAD_MS + 1);
    expect(await snapshotSweep()).toBe(1);
    expect((await h.store.lists.byId(listId))!.snapshot).toEqual({ takenAt: h.clock.now(), chunks: 1 });
    await bigService.remove(p.accountId, p.projectId, 'l');
  });
});

describe('the sweep', () => {
  it('deletes change records older than a week', async () => {
    const { accountId, projectId } = await project();
    await service.create(accountId, projectId, { name: 'l', kind: 'linkedId', description: '' });
    await service.changeEntries(accountId, projectId, 'l', { add: [{ value: 'a' }] });
    const list = (await h.store.lists.byName(projectId, 'l'))!;
    const sweep = defaultSweeps(h.store, 90).listChanges!;
    expect(await h.store.lists.changesSince(list._id, 0)).toHaveLength(1);
    await sweep(new Date(h.clock.now() + CHANGES_KEPT_MS));
    expect(await h.store.lists.changesSince(list._id, 0)).toHaveLength(1);
    expect(await sweep(new Date(h.clock.now() + CHANGES_KEPT_MS + 1))).toBeGreaterThanOrEqual(1);
    expect(await h.store.lists.changesSince(list._id, 0)).toEqual([]);
    // The entries stay.
    expect((await service.entries(accountId, projectId, 'l', { limit: 5 })).entries.map((e) => e.value)).toEqual(['a']);
  });
});
