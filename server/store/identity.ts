// The matching index of identification (server/identification/linker.ts),
// all point reads by `_id`, scoped by account so that one account's devices
// never link to another's (`<acc>:<kind>:<key>`):
// - `t:<tokenHash>` → the visitor a device token names; claimed by a unique
//   insert, which also decides concurrent first visits of one device;
// - `x:<exactKey>` → the newest visitors holding an exact fingerprint, and
//   how many ever did (the anonymity counts below move with it);
// - `p:<partialKey>` → the newest visitors sharing a partial key (fuzzy candidates);
// - `mp:<model>|<prefix>`, `ma:<model>|AS<asn>` → the newest visitors of a
//   device model seen on a network prefix or AS;
// - `n:<prefix>`, `a:<asn>` → how many visitors were seen on a prefix, an AS;
// - `l:<linkedHash>` → the newest visitors seen with a customer's linkedId
//   (hashed: it may be an email), when the project takes it as evidence;
// - `g:<group>` and `stats` → Good–Turing counts (exact keys held by 1, 2, 3
//   visitors) per device group and for the account, with its visitor count;
// - `merge:<visitorId>`, `unmerge:<visitorId>` → claims that make a merge and
//   its undoing happen once, whichever process gets there first;
// - `r:<project>|<deviceKey>|<prefix>` → the newest visitors of a project
//   first seen on a prefix with a device key, and how many ever were
//   (server/identification/related.ts: related visitors).
// A lookup is one read of every key it needs. What a visit teaches the index
// is one ordered bulk write: lists change read-modify-write from the
// lookup's read, under per-key locks, re-read only when this process wrote
// the key since (exact within a process; several processes can lose a list
// entry, as on FerretDB they can lose a counter increment: these are
// statistics and candidate lists, and nothing that must be exact depends on
// them). Counters use $inc, exact on MongoDB.
import { MongoBulkWriteError, type AnyBulkWriteOperation, type Collection, type Db } from 'mongodb';
import { isDuplicateKey } from './errors.js';
import { KeyedLock } from './keyedLock.js';

/** Visitors kept per exact key (the newest holders); partial-key candidate lists. */
export const HOLDERS_CAP = 16;
export const PARTIAL_CAP = 10;
/** Visitors of one device model kept per prefix and per AS. */
export const ON_PREFIX_CAP = 8;
export const ON_ASN_CAP = 16;
/** Visitors kept per linkedId: a family's shared account signs in on several devices. */
export const LINKED_VISITORS_CAP = 8;
/** Visitors kept per related-visitors list (the newest); its `n` counts every visitor that joined it. */
export const RELATED_CAP = 8;

/** A related-visitors list as read: its network prefix, the newest visitors on it, how many ever joined it. */
export interface RelatedList {
  prefix: string;
  visitorIds: string[];
  n: number;
}

/** Good–Turing counts of a device group (or of the whole account): exact keys held by 1, 2 and 3 visitors. */
export interface GroupCounts {
  n1: number;
  n2: number;
  n3: number;
}

export interface AccountCounts extends GroupCounts {
  /** Visitors of the account. */
  visitors: number;
  /** When its first visitor was seen. */
  since: number;
}

/** What linking asks the index about a visit. */
export interface Lookup {
  /** Visitors holding the exact key (the newest few) and how many ever did. */
  holders: string[];
  holderCount: number;
  /** Visitors found through the partial keys. */
  partials: string[];
  /** Visitors of the visit's device model seen on its prefix, and on its AS (the newest few). */
  onPrefix: string[];
  onAsn: string[];
  prefixCrowd: number;
  asnCrowd: number;
  group: GroupCounts;
  account: AccountCounts;
  /** Visitors seen with the visit's linkedId (the newest few). */
  linked: string[];
}

export interface LookupQuery {
  now: number;
  exact: string | null;
  partials: string[];
  group: string;
  model: string;
  prefix: string | null;
  asn: number | null;
  /** Hash of the visit's linkedId; null: none, or the project does not use it. */
  linked: string | null;
  /** The related-visitors list a visitor first seen here joins (related.ts relatedIndexKey), read so that remember need not. */
  related?: string | null;
}

/** What a recorded visit teaches the index (server/identification/linker.ts `remembered`). */
export interface Remembered {
  visitorId: string;
  /** A visitor created on this visit. */
  created: boolean;
  /** The token to point at the visitor (its own, or a new one it came with); null for none. */
  tokenHash: string | null;
  /**
   * More tokens of the same device to point at the visitor, in the same bulk
   * write: the device cookie a first-party proxy carried beside the agent's
   * token (server/identification/service.ts), when it names another visitor or none.
   */
  moreTokens?: string[];
  exact: string | null;
  /** Whether the visitor held the exact key before this visit. */
  heldExact: boolean;
  group: string;
  /** The device model (components.ts modelKey), indexed with the networks below. */
  model: string;
  partials: string[];
  /** The visit's prefix and AS when the visitor had not used them before (they then count it as one more visitor). */
  newPrefix: string | null;
  newAsn: number | null;
  /** The visit's linkedId hash when the visitor had not been seen with it. */
  linked: string | null;
  /** The related-visitors list to join (related.ts relatedIndexKey): set with `newPrefix`. */
  related?: string | null;
}

interface IndexDoc {
  _id: string;
  /** Token entries (and exact keys stored before holder lists existed). */
  visitorId?: string;
  /** Lists, newest first. */
  visitorIds?: string[];
  holders?: string[];
  /** Counters. */
  n?: number;
  n1?: number;
  n2?: number;
  n3?: number;
  visitors?: number;
  since?: number;
  /** Merge claims. */
  into?: string;
  at?: number;
}

/**
 * The index documents one request read, and this process's write count when
 * it read them: `remember` reuses them unless the process wrote one since.
 */
export class IndexReads {
  readonly docs = new Map<string, IndexDoc | null>();
  constructor(readonly at: number) {}
}

/** Keys whose last write this process remembers; beyond it every earlier read counts as stale. */
const WRITES_TRACKED = 50_000;

export class IdentityRepo {
  private readonly col: Collection<IndexDoc>;
  private readonly lock = new KeyedLock();
  private writes = 0;
  private readonly lastWrite = new Map<string, number>();
  private forgotten = 0;

  constructor(db: Db) {
    this.col = db.collection('fingerprints');
  }

  private get(_id: string) {
    return this.col.findOne({ _id });
  }

  private async getMany(ids: string[]): Promise<Map<string, IndexDoc>> {
    const docs = ids.length === 1 ? [await this.get(ids[0]!)].filter((d): d is IndexDoc => d !== null) : await this.col.find({ _id: { $in: ids } }).toArray();
    return new Map(docs.map((d) => [d._id, d]));
  }

  /** A place for one request's reads (lookup fills it, remember uses it). */
  reads(): IndexReads {
    return new IndexReads(this.writes);
  }

  private stale(reads: IndexReads | undefined, _id: string): boolean {
    return !reads || !reads.docs.has(_id) || reads.at < this.forgotten || (this.lastWrite.get(_id) ?? 0) > reads.at;
  }

  private wrote(ids: Iterable<string>): void {
    this.writes++;
    for (const id of ids) this.lastWrite.set(id, this.writes);
    if (this.lastWrite.size > WRITES_TRACKED) {
      this.lastWrite.clear();
      this.forgotten = this.writes;
    }
  }

  async tokenOwner(acc: string, tokenHash: string): Promise<string | null> {
    return (await this.get(tokenKey(acc, tokenHash)))?.visitorId ?? null;
  }

  /** The owners of several tokens in one read (a token nobody holds is absent). */
  async tokenOwners(acc: string, tokenHashes: string[]): Promise<Map<string, string>> {
    return ownersFrom(acc, tokenHashes, await this.getMany(tokenHashes.map((h) => tokenKey(acc, h))));
  }

  async lookup(acc: string, q: LookupQuery, reads: IndexReads = this.reads()): Promise<Lookup> {
    const keys = lookupKeys(acc, q);
    return lookupFrom(keys, q, await this.getMany(keys.ids), reads);
  }

  /** The owners of tokens and a lookup, in one read (a first visit's, or a device this process has not seen). */
  async tokenOwnersAndLookup(acc: string, tokenHashes: string[], q: LookupQuery, reads: IndexReads): Promise<{ owners: Map<string, string>; lookup: Lookup }> {
    const keys = lookupKeys(acc, q);
    const found = await this.getMany([...new Set([...tokenHashes.map((h) => tokenKey(acc, h)), ...keys.ids])]);
    return { owners: ownersFrom(acc, tokenHashes, found), lookup: lookupFrom(keys, q, found, reads) };
  }

  /** The related-visitors lists of `keys` (related.ts relatedKeysOf), in one read; a list nobody joined is absent. */
  async relatedLists(acc: string, keys: { key: string; prefix: string }[]): Promise<RelatedList[]> {
    if (!keys.length) return [];
    const found = await this.getMany(keys.map((k) => `${acc}:r:${k.key}`));
    return keys.flatMap(({ key, prefix }) => {
      const doc = found.get(`${acc}:r:${key}`);
      return doc?.visitorIds ? [{ prefix, visitorIds: doc.visitorIds, n: doc.n ?? doc.visitorIds.length }] : [];
    });
  }

  /** Claims an unmapped token for `visitorId` (unique insert); returns its owner afterwards. */
  async claimToken(acc: string, tokenHash: string, visitorId: string): Promise<string> {
    return this.claim(tokenKey(acc, tokenHash), visitorId);
  }

  private async claim(_id: string, visitorId: string): Promise<string> {
    try {
      await this.col.insertOne({ _id, visitorId });
      return visitorId;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const owner = (await this.get(_id))?.visitorId;
      if (!owner) throw new Error(`index entry ${_id} vanished after a duplicate-key error`, { cause: err });
      return owner;
    }
  }

  /** Conditional re-point (the filter's `_id` keeps it a point read); returns the token's owner afterwards. */
  async moveToken(acc: string, tokenHash: string, from: string, to: string): Promise<string> {
    const _id = tokenKey(acc, tokenHash);
    const moved = await this.col.updateOne({ _id, visitorId: from }, { $set: { visitorId: to } });
    if (moved.modifiedCount === 1) return to;
    const owner = (await this.get(_id))?.visitorId;
    if (!owner) throw new Error(`index entry ${_id} vanished while moving it`);
    return owner;
  }

  /**
   * A merge or its undoing, claimed by a unique insert: true for the one
   * caller that gets it, and for a caller finishing the same claim (same
   * target) that an earlier caller may have left half done.
   */
  async claimMerge(acc: string, kind: 'merge' | 'unmerge', from: string, into: string, at: number): Promise<boolean> {
    const _id = `${acc}:${kind}:${from}`;
    try {
      await this.col.insertOne({ _id, into, at });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await this.get(_id))?.into === into;
    }
  }

  /**
   * What the visit taught the index (see linker.ts remembered()), in one
   * ordered bulk write under the locks of every key it touches (taken in
   * key order, so writers never wait on each other in a cycle). Lists start
   * from `reads` where this process has not written them since. With
   * `claim`, the bulk write starts by claiming that token for the visitor (a
   * new one): an upsert that fails on the unique `_id` when the token names
   * anyone else, and then, the bulk being ordered, nothing is written and
   * remember answers false.
   */
  async remember(acc: string, r: Remembered, now: number, reads?: IndexReads, claim?: string): Promise<boolean> {
    const id = r.visitorId;
    const claimKey = claim === undefined ? null : tokenKey(acc, claim);
    const fronts = new Map<string, number>();
    for (const k of r.partials) fronts.set(`${acc}:p:${k}`, PARTIAL_CAP);
    if (r.newPrefix) fronts.set(`${acc}:mp:${r.model}|${r.newPrefix}`, ON_PREFIX_CAP);
    if (r.newAsn !== null) fronts.set(`${acc}:ma:${r.model}|AS${r.newAsn}`, ON_ASN_CAP);
    if (r.linked) fronts.set(`${acc}:l:${r.linked}`, LINKED_VISITORS_CAP);
    const holderKey = r.exact && !r.heldExact ? `${acc}:x:${r.exact}` : null;
    const relatedKey = r.related ? `${acc}:r:${r.related}` : null;
    const counters = new Map<string, { by: Record<string, number>; onInsert?: Record<string, number> }>();
    const count = (_id: string, by: Record<string, number>, onInsert?: Record<string, number>) => {
      const c = counters.get(_id) ?? { by: {} };
      for (const [f, n] of Object.entries(by)) c.by[f] = (c.by[f] ?? 0) + n;
      counters.set(_id, { by: c.by, onInsert: onInsert ?? c.onInsert });
    };
    const statsKey = `${acc}:stats`;
    const groupKey = `${acc}:g:${r.group}`;
    const tokenKeys = [...new Set([r.tokenHash, ...(r.moreTokens ?? [])])]
      .filter((t): t is string => t !== null)
      .map((t) => tokenKey(acc, t))
      .filter((k) => k !== claimKey);
    const read = [...fronts.keys(), ...(holderKey ? [holderKey] : []), ...(relatedKey ? [relatedKey] : [])];
    const keys = [
      ...new Set([
        ...read,
        ...tokenKeys,
        ...(claimKey ? [claimKey] : []),
        statsKey,
        groupKey,
        ...(r.newPrefix ? [`${acc}:n:${r.newPrefix}`] : []),
        ...(r.newAsn !== null ? [`${acc}:a:${r.newAsn}`] : []),
      ]),
    ].sort();

    return this.lock.runAll(keys, async () => {
      const again = read.filter((k) => this.stale(reads, k));
      const fresh = again.length ? await this.getMany(again) : new Map<string, IndexDoc>();
      const current = (k: string) => (again.includes(k) ? (fresh.get(k) ?? null) : (reads?.docs.get(k) ?? null));
      const ops: AnyBulkWriteOperation<IndexDoc>[] = [];
      const replace = (_id: string, doc: Omit<IndexDoc, '_id'>) => ops.push({ replaceOne: { filter: { _id }, replacement: doc, upsert: true } });
      // An update, not an insert, so that the bulk stays one command (the driver sends each run of one kind as its own).
      if (claimKey) ops.push({ updateOne: { filter: { _id: claimKey, visitorId: id }, update: { $set: { visitorId: id } }, upsert: true } });

      for (const key of tokenKeys) replace(key, { visitorId: id });
      if (r.created) count(statsKey, { visitors: 1 }, { since: now });
      if (holderKey) {
        const doc = current(holderKey);
        const holders = doc?.holders ?? (doc?.visitorId ? [doc.visitorId] : []);
        if (!holders.includes(id)) {
          // One more visitor holds the key: it moves up a Good–Turing count.
          const k = doc?.n ?? holders.length;
          replace(holderKey, { holders: [id, ...holders].slice(0, HOLDERS_CAP), n: k + 1 });
          const shift = goodTuringShift(k);
          if (shift) {
            count(groupKey, shift);
            count(statsKey, shift, { since: now });
          }
        }
      }
      for (const [_id, cap] of fronts) {
        const ids = current(_id)?.visitorIds ?? [];
        if (ids[0] !== id) replace(_id, { visitorIds: [id, ...ids.filter((x) => x !== id)].slice(0, cap) });
      }
      if (relatedKey) {
        const doc = current(relatedKey);
        const ids = doc?.visitorIds ?? [];
        if (!ids.includes(id)) replace(relatedKey, { visitorIds: [id, ...ids].slice(0, RELATED_CAP), n: (doc?.n ?? ids.length) + 1 });
      }
      if (r.newPrefix) count(`${acc}:n:${r.newPrefix}`, { n: 1 });
      if (r.newAsn !== null) count(`${acc}:a:${r.newAsn}`, { n: 1 });
      for (const [_id, { by, onInsert }] of counters) {
        ops.push({ updateOne: { filter: { _id }, update: { $inc: by, ...(onInsert ? { $setOnInsert: onInsert } : {}) }, upsert: true } });
      }
      if (!ops.length) return true;
      try {
        return await this.bulk(ops, claimKey !== null);
      } finally {
        this.wrote(keys);
      }
    });
  }

  /**
   * An ordered bulk write; when an upsert loses an insert race with another
   * process (E11000), the rest of it, from that statement on, once more:
   * both MongoDB and FerretDB stop an ordered bulk at its first error. When
   * the first statement is a claim, its E11000 is the claim lost: false.
   */
  private async bulk(ops: AnyBulkWriteOperation<IndexDoc>[], claimFirst: boolean): Promise<boolean> {
    try {
      await this.col.bulkWrite(ops, { ordered: true });
    } catch (err) {
      const first = err instanceof MongoBulkWriteError ? [err.writeErrors].flat()[0] : undefined;
      if (!first || first.code !== 11000) throw err;
      if (claimFirst && first.index === 0) return false;
      await this.col.bulkWrite(ops.slice(first.index), { ordered: true });
    }
    return true;
  }
}

/** The index entry of a device token. */
const tokenKey = (acc: string, tokenHash: string) => `${acc}:t:${tokenHash}`;

function ownersFrom(acc: string, tokenHashes: string[], found: Map<string, IndexDoc>): Map<string, string> {
  const owners = new Map<string, string>();
  for (const h of tokenHashes) {
    const owner = found.get(tokenKey(acc, h))?.visitorId;
    if (owner) owners.set(h, owner);
  }
  return owners;
}

/** The index keys a lookup reads. */
function lookupKeys(acc: string, q: LookupQuery) {
  const key = {
    exact: q.exact ? `${acc}:x:${q.exact}` : null,
    onPrefix: q.prefix && q.model ? `${acc}:mp:${q.model}|${q.prefix}` : null,
    onAsn: q.asn !== null && q.model ? `${acc}:ma:${q.model}|AS${q.asn}` : null,
    prefix: q.prefix ? `${acc}:n:${q.prefix}` : null,
    asn: q.asn !== null ? `${acc}:a:${q.asn}` : null,
    linked: q.linked ? `${acc}:l:${q.linked}` : null,
    related: q.related ? `${acc}:r:${q.related}` : null,
    group: q.group ? `${acc}:g:${q.group}` : null,
    stats: `${acc}:stats`,
  };
  const partials = q.partials.map((k) => `${acc}:p:${k}`);
  return { key, partials, ids: [...new Set([...Object.values(key), ...partials].filter((k): k is string => k !== null))] };
}

/** The lookup's answer from the documents read (kept in `reads` for remember). */
function lookupFrom({ key, partials, ids }: ReturnType<typeof lookupKeys>, q: LookupQuery, found: Map<string, IndexDoc>, reads: IndexReads): Lookup {
  for (const id of ids) reads.docs.set(id, found.get(id) ?? null);
  const doc = (id: string | null) => (id ? (found.get(id) ?? null) : null);
  const exact = doc(key.exact);
  const stats = doc(key.stats);
  return {
    holders: exact?.holders ?? (exact?.visitorId ? [exact.visitorId] : []),
    holderCount: exact?.n ?? (exact?.visitorId ? 1 : 0),
    partials: [...new Set(partials.flatMap((k) => doc(k)?.visitorIds ?? []))],
    onPrefix: doc(key.onPrefix)?.visitorIds ?? [],
    onAsn: doc(key.onAsn)?.visitorIds ?? [],
    prefixCrowd: doc(key.prefix)?.n ?? 0,
    asnCrowd: doc(key.asn)?.n ?? 0,
    group: counts(doc(key.group)),
    account: { ...counts(stats), visitors: stats?.visitors ?? 0, since: stats?.since ?? q.now } satisfies AccountCounts,
    linked: doc(key.linked)?.visitorIds ?? [],
  };
}

const counts = (d: IndexDoc | null): GroupCounts => ({ n1: d?.n1 ?? 0, n2: d?.n2 ?? 0, n3: d?.n3 ?? 0 });

/** A key going from k to k + 1 holders leaves count k and joins count k + 1 (only 1–3 are kept). */
export function goodTuringShift(k: number): Record<string, number> | null {
  const shift: Record<string, number> = {};
  if (k >= 1 && k <= 3) shift[`n${k}`] = -1;
  if (k + 1 <= 3) shift[`n${k + 1}`] = 1;
  return Object.keys(shift).length ? shift : null;
}
