// The matching index of one account over the store: what link() reads and
// writes (linker.ts LinkIndex), with merges made exactly once by a claim.
// One per request: visitor reads issued together go out as one read (a
// DataLoader batch), and what the request read is reused to record the
// visit and to index what it taught, so a returning device costs one
// visitor read and one visitor write. Every visitor write is a
// compare-and-swap (server/store/visitors.ts `update`) of a document this
// module computed from the one it read; a lost race reads again and
// recomputes.
import DataLoader from 'dataloader';
import { ulid } from 'ulid';
import type { IndexReads, Lookup, LookupQuery, Remembered } from '../store/identity.js';
import type { Store } from '../store/index.js';
import type { Suspect, VisitorDoc } from '../store/visitors.js';
import type { Components } from './components.js';
import type { LinkIndex, VisitorRecord } from './linker.js';
import { mergedDoc, toRecord, unmergedDocs } from './record.js';

/** Attempts at a compare-and-swap before giving up on a visitor that keeps changing. */
export const CAS_ATTEMPTS = 8;

export class StoreIndex implements LinkIndex {
  private readonly reads: IndexReads;
  private readonly docs: DataLoader<string, VisitorDoc | null>;
  /** Token owners this request read or wrote (null: nobody holds it). */
  private readonly owners = new Map<string, string | null>();

  constructor(
    private readonly store: Store,
    private readonly accountId: string,
    private readonly now: number,
  ) {
    this.reads = store.identity.reads();
    this.docs = new DataLoader(
      async (ids) => {
        const found = await store.visitors.getMany(ids);
        return ids.map((id) => found.get(id) ?? null);
      },
      { maxBatchSize: 100 },
    );
  }

  async tokenOwner(tokenHash: string): Promise<string | null> {
    return (await this.tokenOwners([tokenHash])).get(tokenHash) ?? null;
  }

  /**
   * The owners of the visit's tokens (the agent's and a proxy's device
   * cookie), read together in one command and kept for this request, so
   * that linking's tokenOwner asks the database nothing more.
   */
  async tokenOwners(tokenHashes: string[]): Promise<Map<string, string | null>> {
    const missing = [...new Set(tokenHashes.filter((h) => !this.owners.has(h)))];
    if (missing.length) {
      const found = await this.store.identity.tokenOwners(this.accountId, missing);
      for (const h of missing) this.owners.set(h, found.get(h) ?? null);
    }
    return new Map(tokenHashes.map((h) => [h, this.owners.get(h) ?? null]));
  }

  lookup(q: LookupQuery): Promise<Lookup> {
    return this.store.identity.lookup(this.accountId, q, this.reads);
  }

  async visitor(id: string): Promise<VisitorRecord | null> {
    const d = await this.doc(id);
    return d ? toRecord(d) : null;
  }

  /** The visitor's document as this request read it (linking's read, reused to record the visit). */
  async doc(id: string): Promise<VisitorDoc | null> {
    const d = await this.docs.load(id);
    return d && d.accountId === this.accountId ? d : null;
  }

  /** Writes `next` over the document this request read, if nothing changed it since; forgets the read either way. */
  async write(prior: VisitorDoc, next: VisitorDoc): Promise<boolean> {
    try {
      return await this.store.visitors.update(prior, next);
    } finally {
      this.docs.clear(prior._id);
    }
  }

  async createVisitor(components: Components, suspects: Suspect[], residual: number | null): Promise<string> {
    const doc: VisitorDoc = {
      _id: `iq_${ulid(this.now)}`,
      accountId: this.accountId,
      firstSeenAt: this.now,
      lastSeenAt: this.now,
      visitCount: 0,
      components: [components],
      suspects,
      residual,
      recent: [],
      visits: [],
      rev: 0,
    };
    await this.store.visitors.create(doc);
    this.docs.clear(doc._id).prime(doc._id, doc);
    return doc._id;
  }

  async dropVisitor(id: string): Promise<void> {
    await this.store.visitors.delete(id);
    this.docs.clear(id);
  }

  async claimToken(tokenHash: string, visitorId: string): Promise<string> {
    const owner = await this.store.identity.claimToken(this.accountId, tokenHash, visitorId);
    this.owners.set(tokenHash, owner);
    return owner;
  }

  async moveToken(tokenHash: string, from: string, to: string): Promise<string> {
    const owner = await this.store.identity.moveToken(this.accountId, tokenHash, from, to);
    this.owners.set(tokenHash, owner);
    return owner;
  }

  /**
   * Exactly once across processes: the merge claim's unique insert decides
   * who merges; a caller finding the same claim finishes what an earlier one
   * may have left half done (every step is idempotent: the survivor takes
   * `from` only while it does not list it yet).
   */
  async merge(from: string, into: string, now: number): Promise<void> {
    if (!(await this.store.identity.claimMerge(this.accountId, 'merge', from, into, now))) return;
    let merged: VisitorDoc | null = null;
    for (let attempt = 1; !merged; attempt++) {
      const [a, b] = await Promise.all([this.store.visitors.get(from), this.store.visitors.get(into)]);
      if (!a || !b || b.mergedInto) break;
      if ((b.mergedFrom ?? []).includes(from) || (await this.store.visitors.update(b, mergedDoc(a, b)))) merged = a;
      else if (attempt === CAS_ATTEMPTS) throw new Error(`visitor ${into} kept changing while ${from} was merged into it`);
    }
    this.docs.clear(from).clear(into);
    // `from` and the visitors merged into it earlier now name `into` directly.
    const aliases = merged?.mergedFrom ?? [];
    await this.change(from, (d) => (d.mergedInto === into ? null : { ...d, mergedInto: into, suspects: [], residual: null }));
    await Promise.all(aliases.map((id) => this.change(id, (d) => (d.mergedInto === into ? null : { ...d, mergedInto: into }))));
    const tokens = merged?.tokens ?? (await this.visitor(from))?.tokens ?? [];
    await Promise.all(tokens.map((t) => this.moveToken(t.hash, from, into)));
  }

  async unmerge(from: string, into: string): Promise<void> {
    if (!(await this.store.identity.claimMerge(this.accountId, 'unmerge', from, into, this.now))) return;
    let restored: VisitorDoc | null = null;
    for (let attempt = 1; !restored; attempt++) {
      const [a, b] = await Promise.all([this.store.visitors.get(from), this.store.visitors.get(into)]);
      if (!a || !b || a.mergedInto !== into) break;
      const docs = unmergedDocs(a, b);
      if (!(b.mergedFrom ?? []).includes(from) || (await this.store.visitors.update(b, docs.into))) restored = docs.from;
      else if (attempt === CAS_ATTEMPTS) throw new Error(`visitor ${into} kept changing while ${from} was taken out of it`);
    }
    this.docs.clear(from).clear(into);
    if (!restored) return;
    const { tokens } = restored;
    await this.change(from, (d) => (d.mergedInto !== into ? null : { ...d, mergedInto: null, suspects: [], residual: null, tokens }));
    await Promise.all((tokens ?? []).map((t) => this.moveToken(t.hash, into, from)));
  }

  remember(r: Remembered): Promise<void> {
    return this.store.identity.remember(this.accountId, r, this.now, this.reads);
  }

  /** Applies `change` by compare-and-swap, reading again after a lost race; `change` answers null when nothing is to be written. */
  private async change(id: string, change: (d: VisitorDoc) => VisitorDoc | null): Promise<void> {
    for (let attempt = 1; attempt <= CAS_ATTEMPTS; attempt++) {
      const d = await this.store.visitors.get(id);
      const next = d && change(d);
      if (!d || !next || (await this.store.visitors.update(d, next))) return;
    }
    throw new Error(`visitor ${id} kept changing`);
  }
}
