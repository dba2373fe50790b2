// The matching index of one account over the store: what link() reads and
// writes (linker.ts LinkIndex), with merges made exactly once by a claim.
// One per request: visitor reads issued together go out as one read (a
// DataLoader batch), and what the request read is reused to record the
// visit and to index what it taught, so a returning device costs one
// visitor read and one visitor write.
import DataLoader from 'dataloader';
import { ulid } from 'ulid';
import type { IndexReads } from '../store/identity.js';
import type { Store } from '../store/index.js';
import type { StoredVisit } from '../store/visits.js';
import { toRecord, type RecentActivity, type VisitFacts, type VisitorDoc, type VisitRecorded } from '../store/visitors.js';
import type { Components } from './components.js';
import type { LinkIndex, Lookup, LookupQuery, Match, Remembered, Suspect, Visit, VisitorRecord } from './linker.js';

export class StoreIndex implements LinkIndex {
  private readonly reads: IndexReads;
  private readonly docs: DataLoader<string, VisitorDoc | null>;

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

  tokenOwner(tokenHash: string): Promise<string | null> {
    return this.store.identity.tokenOwner(this.accountId, tokenHash);
  }

  lookup(q: LookupQuery): Promise<Lookup> {
    return this.store.identity.lookup(this.accountId, q, this.reads);
  }

  async visitor(id: string): Promise<VisitorRecord | null> {
    const d = await this.docs.load(id);
    return d && d.accountId === this.accountId ? toRecord(d) : null;
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

  claimToken(tokenHash: string, visitorId: string): Promise<string> {
    return this.store.identity.claimToken(this.accountId, tokenHash, visitorId);
  }

  moveToken(tokenHash: string, from: string, to: string): Promise<string> {
    return this.store.identity.moveToken(this.accountId, tokenHash, from, to);
  }

  /**
   * Exactly once across processes: the merge claim's unique insert decides
   * who merges; a caller finding the same claim finishes what an earlier one
   * may have left half done (every step is idempotent).
   */
  async merge(from: string, into: string, now: number): Promise<void> {
    if (!(await this.store.identity.claimMerge(this.accountId, 'merge', from, into, now))) return;
    const merged = await this.store.visitors.merge(from, into);
    this.docs.clear(from).clear(into);
    const tokens = merged?.tokens ?? (await this.visitor(from))?.tokens ?? [];
    await Promise.all(tokens.map((t) => this.store.identity.moveToken(this.accountId, t.hash, from, into)));
  }

  async unmerge(from: string, into: string): Promise<void> {
    if (!(await this.store.identity.claimMerge(this.accountId, 'unmerge', from, into, this.now))) return;
    const restored = await this.store.visitors.unmerge(from, into);
    this.docs.clear(from).clear(into);
    await Promise.all((restored?.tokens ?? []).map((t) => this.store.identity.moveToken(this.accountId, t.hash, into, from)));
  }

  remember(r: Remembered): Promise<void> {
    return this.store.identity.remember(this.accountId, r, this.now, this.reads);
  }

  /** Records the visit on the matched visitor, starting from the document linking read (see VisitorsRepo.recordVisit). */
  async record(match: Match, visit: Visit, activity: RecentActivity, windowMs: number, summarize: (facts: VisitFacts) => StoredVisit): Promise<VisitRecorded> {
    const prior = await this.docs.load(match.visitorId);
    try {
      return await this.store.visitors.recordVisit(match, visit, activity, windowMs, prior, summarize);
    } finally {
      this.docs.clear(match.visitorId);
    }
  }
}
