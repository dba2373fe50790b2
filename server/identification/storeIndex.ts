// The matching index of one account over the store: what link() reads and
// writes (linker.ts LinkIndex), with merges made exactly once by a claim.
// One per request: visitor reads issued together go out as one read (a
// DataLoader batch), and what the request read is reused to record the
// visit and to index what it taught, so a returning device costs one
// visitor read and one visitor write. Every visitor write is a
// compare-and-swap (server/store/visitors.ts `update`) of a document this
// module computed from the one it read; a lost race reads again and
// recomputes. With a VisitorCache, a returning device's token and visitor
// come from this process's memory; the guard below keeps that unproven data
// from deciding any write but the compare-and-swap that proves it.
//
// A first visit costs at most 5 commands: its tokens' owners and every index
// key of the lookup in one read, the candidate visitors in one, the new
// visitor inserted with its first visit already recorded, its token claim
// as the first statement of the index's bulk write, and the event. Linking
// creates the visitor and claims the token; both wait here for the visit:
// the insert for `write`, the claim for `remember`, which may find the token
// taken by a concurrent first visit of the same device. Then the visitor
// (that nothing names yet) is deleted and the request runs again from the
// database, where it finds the winner by its token.
import DataLoader from 'dataloader';
import { ulid } from '../ids.js';
import type { IndexReads, Lookup, LookupQuery, Remembered } from '../store/identity.js';
import type { Store } from '../store/index.js';
import type { Suspect, VisitorDoc } from '../store/visitors.js';
import type { Components } from './components.js';
import type { LinkIndex, VisitorRecord } from './linker.js';
import { mergedDoc, toRecord, unmergedDocs } from './record.js';
import type { VisitorCache } from './visitorCache.js';

/** Attempts at a compare-and-swap before giving up on a visitor that keeps changing. */
export const CAS_ATTEMPTS = 8;

/**
 * Linking was about to act on what the cache served without the database's
 * word for it: the request starts again from the database. Nothing has been
 * written when it is thrown.
 */
export class CacheUnproven extends Error {
  constructor(readonly visitorIds: string[]) {
    super(`cached visitors not proven: ${visitorIds.join(', ')}`);
    this.name = 'CacheUnproven';
  }
}

/**
 * The token a new visitor claimed was taken by a concurrent first visit of
 * the device: the visitor is deleted, and the request starts again from the
 * database (the event is not stored yet).
 */
export class TokenClaimLost extends Error {
  constructor(readonly tokenHash: string) {
    super(`token ${tokenHash} was claimed by another visitor`);
    this.name = 'TokenClaimLost';
  }
}

export class StoreIndex implements LinkIndex {
  private readonly reads: IndexReads;
  private readonly docs: DataLoader<string, VisitorDoc | null>;
  /** Token owners this request read or wrote (null: nobody holds it). */
  private readonly owners = new Map<string, string | null>();
  /** Visitors whose document came from the cache, not yet proven by a write. */
  private readonly unproven = new Set<string>();
  /** Visitors linking created that are not stored yet: `write` inserts them with their first visit. */
  private readonly pending = new Map<string, VisitorDoc>();
  /** The token claim of a new visitor, made by `remember`'s bulk write. */
  private claim: { tokenHash: string; visitorId: string } | null = null;
  /** The lookup read with the tokens' owners, for the query it answers. */
  private ahead: { query: string; lookup: Lookup } | null = null;

  constructor(
    private readonly store: Store,
    private readonly accountId: string,
    private readonly now: number,
    private readonly cache: VisitorCache | null = null,
    /** Whether the cache may answer reads (false: it only learns from proven writes). */
    private readonly serveFromCache = true,
    /** The related-visitors list the visit would join (related.ts): read with every lookup, for remember's write. */
    private readonly related: string | null = null,
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
   * that linking's tokenOwner asks the database nothing more. With `ahead`
   * (built only when the tokens must be read),
   * the same command reads the lookup linking makes when no token names a
   * visitor it believes (a first visit), and `lookup` answers from it.
   */
  async tokenOwners(tokenHashes: string[], ahead?: () => LookupQuery): Promise<Map<string, string | null>> {
    let missing = [...new Set(tokenHashes.filter((h) => !this.owners.has(h)))];
    // A token the cache holds with its visitor's document at the same revision needs no read (a visitor merged away does not count).
    for (const h of missing) {
      const doc = this.serveFromCache ? this.cache?.byToken(this.accountId, h) : null;
      if (!doc || doc.mergedInto) continue;
      this.owners.set(h, doc._id);
      this.docs.prime(doc._id, doc);
      this.unproven.add(doc._id);
    }
    missing = missing.filter((h) => !this.owners.has(h));
    if (missing.length && ahead) {
      const query = ahead();
      const { owners, lookup } = await this.store.identity.tokenOwnersAndLookup(this.accountId, missing, { ...query, related: this.related }, this.reads);
      for (const h of missing) this.owners.set(h, owners.get(h) ?? null);
      this.ahead = { query: JSON.stringify(query), lookup };
    } else if (missing.length) {
      const found = await this.store.identity.tokenOwners(this.accountId, missing);
      for (const h of missing) this.owners.set(h, found.get(h) ?? null);
    }
    return new Map(tokenHashes.map((h) => [h, this.owners.get(h) ?? null]));
  }

  lookup(q: LookupQuery): Promise<Lookup> {
    if (this.ahead && this.ahead.query === JSON.stringify(q)) return Promise.resolve(this.ahead.lookup);
    return this.store.identity.lookup(this.accountId, { ...q, related: this.related }, this.reads);
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

  /**
   * The visitor's document to record the visit on: what linking read, or a
   * newer revision this process itself wrote since (a concurrent visit of the
   * same device), which saves the retry that document would otherwise cost.
   */
  async docToRecordOn(id: string): Promise<VisitorDoc | null> {
    const read = await this.doc(id);
    const newer = this.serveFromCache ? this.cache?.doc(id) : null;
    return read && newer && !newer.mergedInto && newer.accountId === this.accountId && (newer.rev ?? 0) > (read.rev ?? 0) ? newer : read;
  }

  /**
   * Writes `next` over `prior` if nothing changed it since; forgets the read
   * either way. A write that held proves `prior`, and the cache keeps `next`;
   * a write that failed on a document the cache served means the cache was
   * stale, and the request starts again from the database.
   */
  async write(prior: VisitorDoc, next: VisitorDoc): Promise<boolean> {
    for (const id of this.unproven) if (id !== prior._id) throw this.stale();
    if (this.pending.delete(prior._id)) {
      // A visitor created on this visit: one insert, as a compare-and-swap over the empty one would have left it.
      const doc = { ...next, rev: (prior.rev ?? 0) + 1 };
      await this.store.visitors.create(doc);
      this.docs.clear(prior._id);
      this.cache?.remember(doc, []);
      return true;
    }
    try {
      const done = await this.store.visitors.update(prior, next);
      if (done) this.cache?.remember({ ...next, rev: (prior.rev ?? 0) + 1 }, []);
      else if (this.unproven.has(prior._id)) throw this.stale();
      this.unproven.delete(prior._id);
      return done;
    } finally {
      this.docs.clear(prior._id);
    }
  }

  /** After remember: the tokens that now name the visitor, as of the revision this request wrote. */
  rememberTokens(visitorId: string, tokenHashes: readonly string[]): void {
    this.cache?.rememberTokens(this.accountId, visitorId, tokenHashes);
  }

  /** No write but the proving compare-and-swap may follow from what the cache served. */
  private prove(): void {
    if (this.unproven.size) throw this.stale();
  }

  private stale(): CacheUnproven {
    const ids = [...this.unproven];
    for (const id of ids) this.cache?.forget(id);
    return new CacheUnproven(ids);
  }

  /** Stores a visitor created on this visit before anything names it but its own claim (a token moved to it). */
  private async materialize(id: string): Promise<void> {
    const doc = this.pending.get(id);
    if (!doc) return;
    this.pending.delete(id);
    await this.store.visitors.create(doc);
  }

  /** A new visitor, stored by `write` with the visit (or first, when a token is moved to it). */
  async createVisitor(components: Components, suspects: Suspect[], residual: number | null, highRecall: string | null = null): Promise<string> {
    this.prove();
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
      ...(highRecall ? { highRecall } : {}),
    };
    this.pending.set(doc._id, doc);
    this.docs.clear(doc._id).prime(doc._id, doc);
    return doc._id;
  }

  async dropVisitor(id: string): Promise<void> {
    this.prove();
    if (!this.pending.delete(id)) await this.store.visitors.delete(id);
    this.docs.clear(id);
  }

  /**
   * A token this request read as nobody's, for a visitor created on this
   * visit: claimed by `remember` (answered as won; a lost claim runs the
   * request again). Otherwise at once, by a unique insert.
   */
  async claimToken(tokenHash: string, visitorId: string): Promise<string> {
    this.prove();
    if (this.owners.get(tokenHash) === null && this.pending.has(visitorId) && !this.claim) {
      this.claim = { tokenHash, visitorId };
      this.owners.set(tokenHash, visitorId);
      return visitorId;
    }
    await this.materialize(visitorId);
    const owner = await this.store.identity.claimToken(this.accountId, tokenHash, visitorId);
    this.owners.set(tokenHash, owner);
    return owner;
  }

  /** Re-points a token, and changes the visitor it leaves (its `rev`), so that no process's cache still vouches for it. */
  async moveToken(tokenHash: string, from: string, to: string): Promise<string> {
    this.prove();
    await this.materialize(to);
    const owner = await this.repoint(tokenHash, from, to);
    if (owner === to) await this.store.visitors.touch(from);
    return owner;
  }

  /** Re-points a token of a visitor a merge (or its undoing) has already changed. */
  private async repoint(tokenHash: string, from: string, to: string): Promise<string> {
    const owner = await this.store.identity.moveToken(this.accountId, tokenHash, from, to);
    this.owners.set(tokenHash, owner);
    this.cache?.forget(from);
    return owner;
  }

  /**
   * Exactly once across processes: the merge claim's unique insert decides
   * who merges; a caller finding the same claim finishes what an earlier one
   * may have left half done (every step is idempotent: the survivor takes
   * `from` only while it does not list it yet).
   */
  async merge(from: string, into: string, now: number): Promise<void> {
    this.prove();
    if (!(await this.store.identity.claimMerge(this.accountId, 'merge', from, into, now))) return;
    let merged: VisitorDoc | null = null;
    for (let attempt = 1; !merged; attempt++) {
      const [a, b] = await Promise.all([this.store.visitors.get(from), this.store.visitors.get(into)]);
      if (!a || !b || b.mergedInto) break;
      if ((b.mergedFrom ?? []).includes(from) || (await this.store.visitors.update(b, mergedDoc(a, b)))) merged = a;
      else if (attempt === CAS_ATTEMPTS) throw new Error(`visitor ${into} kept changing while ${from} was merged into it`);
    }
    this.docs.clear(from).clear(into);
    this.cache?.forget(from);
    this.cache?.forget(into);
    // `from` and the visitors merged into it earlier now name `into` directly.
    const aliases = merged?.mergedFrom ?? [];
    await this.change(from, (d) => (d.mergedInto === into ? null : { ...d, mergedInto: into, suspects: [], residual: null }));
    await Promise.all(aliases.map((id) => this.change(id, (d) => (d.mergedInto === into ? null : { ...d, mergedInto: into }))));
    const tokens = merged?.tokens ?? (await this.visitor(from))?.tokens ?? [];
    await Promise.all(tokens.map((t) => this.repoint(t.hash, from, into)));
  }

  async unmerge(from: string, into: string): Promise<void> {
    this.prove();
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
    this.cache?.forget(from);
    this.cache?.forget(into);
    if (!restored) return;
    const { tokens } = restored;
    await this.change(from, (d) => (d.mergedInto !== into ? null : { ...d, mergedInto: null, suspects: [], residual: null, tokens }));
    await Promise.all((tokens ?? []).map((t) => this.repoint(t.hash, into, from)));
  }

  /** Whether `remember` decides a new visitor's token claim (the event must wait for it). */
  get claiming(): boolean {
    return this.claim !== null;
  }

  /** Indexes the visit; a new visitor's token claim goes first, and when it is lost the visitor is deleted (TokenClaimLost). */
  async remember(r: Remembered): Promise<void> {
    const claim = this.claim?.visitorId === r.visitorId ? this.claim : null;
    if (claim) await this.materialize(claim.visitorId);
    if (await this.store.identity.remember(this.accountId, r, this.now, this.reads, claim?.tokenHash)) return;
    const { tokenHash, visitorId } = claim!;
    await this.store.visitors.delete(visitorId, 1);
    this.cache?.forget(visitorId);
    throw new TokenClaimLost(tokenHash);
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
