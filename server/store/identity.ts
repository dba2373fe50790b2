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
// - `g:<group>` and `stats` → Good–Turing counts (exact keys held by 1, 2, 3
//   visitors) per device group and for the account, with its visitor count;
// - `merge:<visitorId>`, `unmerge:<visitorId>` → claims that make a merge and
//   its undoing happen once, whichever process gets there first.
// Lists change read-modify-write under a per-key lock (exact within a
// process; on FerretDB, several processes can lose an entry, as they can
// lose a counter increment: these are statistics and candidate lists, and
// nothing that must be exact depends on them). Counters use $inc, exact on
// MongoDB.
import type { Collection, Db } from 'mongodb';
import type { AccountCounts, GroupCounts } from '../identification/evidence.js';
import type { Lookup, LookupQuery, Remembered } from '../identification/linker.js';
import { HOLDERS_CAP, ON_ASN_CAP, ON_PREFIX_CAP, PARTIAL_CAP } from '../identification/record.js';
import { isDuplicateKey, upsert } from './errors.js';
import { KeyedLock } from './keyedLock.js';

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

export class IdentityRepo {
  private readonly col: Collection<IndexDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('fingerprints');
  }

  private get(_id: string) {
    return this.col.findOne({ _id });
  }

  async tokenOwner(acc: string, tokenHash: string): Promise<string | null> {
    return (await this.get(`${acc}:t:${tokenHash}`))?.visitorId ?? null;
  }

  async lookup(acc: string, q: LookupQuery): Promise<Lookup> {
    const [exact, onPrefix, onAsn, prefix, asn, group, stats, ...partials] = await Promise.all([
      q.exact ? this.get(`${acc}:x:${q.exact}`) : null,
      q.prefix && q.model ? this.get(`${acc}:mp:${q.model}|${q.prefix}`) : null,
      q.asn !== null && q.model ? this.get(`${acc}:ma:${q.model}|AS${q.asn}`) : null,
      q.prefix ? this.get(`${acc}:n:${q.prefix}`) : null,
      q.asn !== null ? this.get(`${acc}:a:${q.asn}`) : null,
      q.group ? this.get(`${acc}:g:${q.group}`) : null,
      this.get(`${acc}:stats`),
      ...q.partials.map((k) => this.get(`${acc}:p:${k}`)),
    ]);
    return {
      holders: exact?.holders ?? (exact?.visitorId ? [exact.visitorId] : []),
      holderCount: exact?.n ?? (exact?.visitorId ? 1 : 0),
      partials: [...new Set(partials.flatMap((d) => d?.visitorIds ?? []))],
      onPrefix: onPrefix?.visitorIds ?? [],
      onAsn: onAsn?.visitorIds ?? [],
      prefixCrowd: prefix?.n ?? 0,
      asnCrowd: asn?.n ?? 0,
      group: counts(group),
      account: { ...counts(stats), visitors: stats?.visitors ?? 0, since: stats?.since ?? q.now } satisfies AccountCounts,
    };
  }

  /** Claims an unmapped token for `visitorId` (unique insert); returns its owner afterwards. */
  async claimToken(acc: string, tokenHash: string, visitorId: string): Promise<string> {
    return this.claim(`${acc}:t:${tokenHash}`, visitorId);
  }

  private async claim(_id: string, visitorId: string): Promise<string> {
    try {
      await this.col.insertOne({ _id, visitorId });
      return visitorId;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const owner = (await this.get(_id))?.visitorId;
      if (!owner) throw new Error(`index entry ${_id} vanished after a duplicate-key error`);
      return owner;
    }
  }

  /** Conditional re-point (the filter's `_id` keeps it a point read); returns the token's owner afterwards. */
  async moveToken(acc: string, tokenHash: string, from: string, to: string): Promise<string> {
    const _id = `${acc}:t:${tokenHash}`;
    const moved = await this.col.updateOne({ _id, visitorId: from }, { $set: { visitorId: to } });
    if (moved.modifiedCount === 1) return to;
    const owner = (await this.get(_id))?.visitorId;
    if (!owner) throw new Error(`index entry ${_id} vanished while moving it`);
    return owner;
  }

  async setToken(acc: string, tokenHash: string, visitorId: string): Promise<void> {
    const _id = `${acc}:t:${tokenHash}`;
    await upsert(() => this.col.replaceOne({ _id }, { visitorId }, { upsert: true }));
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

  /** What the visit taught the index (see linker.ts remembered()). */
  async remember(acc: string, r: Remembered, now: number): Promise<void> {
    const id = r.visitorId;
    const writes: Promise<unknown>[] = [];
    if (r.tokenHash) writes.push(this.setToken(acc, r.tokenHash, id));
    if (r.created) writes.push(this.inc(`${acc}:stats`, { visitors: 1 }, { since: now }));
    if (r.exact && !r.heldExact) writes.push(this.addHolder(acc, r.exact, r.group, id, now));
    for (const k of r.partials) writes.push(this.front(`${acc}:p:${k}`, id, PARTIAL_CAP));
    if (r.newPrefix) {
      writes.push(this.inc(`${acc}:n:${r.newPrefix}`, { n: 1 }));
      writes.push(this.front(`${acc}:mp:${r.model}|${r.newPrefix}`, id, ON_PREFIX_CAP));
    }
    if (r.newAsn !== null) {
      writes.push(this.inc(`${acc}:a:${r.newAsn}`, { n: 1 }));
      writes.push(this.front(`${acc}:ma:${r.model}|AS${r.newAsn}`, id, ON_ASN_CAP));
    }
    await Promise.all(writes);
  }

  /** Serialised per document within the process: FerretDB applies $inc as read-modify-write. */
  private inc(_id: string, by: Record<string, number>, onInsert: Record<string, number> = {}) {
    return this.lock.run(_id, () => upsert(() => this.col.updateOne({ _id }, { $inc: by, ...(Object.keys(onInsert).length ? { $setOnInsert: onInsert } : {}) }, { upsert: true })));
  }

  /** Moves `visitorId` to the front of a bounded list. */
  private front(_id: string, visitorId: string, cap: number): Promise<void> {
    return this.lock.run(_id, async () => {
      const ids = (await this.get(_id))?.visitorIds ?? [];
      if (ids[0] === visitorId) return;
      const next = [visitorId, ...ids.filter((x) => x !== visitorId)].slice(0, cap);
      await upsert(() => this.col.replaceOne({ _id }, { visitorIds: next }, { upsert: true }));
    });
  }

  /** One more visitor holds an exact key: its holder list, and the key moves up a Good–Turing count. */
  private addHolder(acc: string, key: string, group: string, visitorId: string, now: number): Promise<void> {
    const _id = `${acc}:x:${key}`;
    return this.lock.run(_id, async () => {
      const doc = await this.get(_id);
      const holders = doc?.holders ?? (doc?.visitorId ? [doc.visitorId] : []);
      if (holders.includes(visitorId)) return;
      const k = doc?.n ?? holders.length;
      await upsert(() => this.col.replaceOne({ _id }, { holders: [visitorId, ...holders].slice(0, HOLDERS_CAP), n: k + 1 }, { upsert: true }));
      const shift = goodTuringShift(k);
      if (shift) await Promise.all([this.inc(`${acc}:g:${group}`, shift), this.inc(`${acc}:stats`, shift, { since: now })]);
    });
  }
}

const counts = (d: IndexDoc | null): GroupCounts => ({ n1: d?.n1 ?? 0, n2: d?.n2 ?? 0, n3: d?.n3 ?? 0 });

/** A key going from k to k + 1 holders leaves count k and joins count k + 1 (only 1–3 are kept). */
export function goodTuringShift(k: number): Record<string, number> | null {
  const shift: Record<string, number> = {};
  if (k >= 1 && k <= 3) shift[`n${k}`] = -1;
  if (k + 1 <= 3) shift[`n${k + 1}`] = 1;
  return Object.keys(shift).length ? shift : null;
}
