// The matching index of one account over the store: what link() reads and
// writes (linker.ts LinkIndex), with merges made exactly once by a claim.
import { ulid } from 'ulid';
import type { Store } from '../store/index.js';
import { toRecord } from '../store/visitors.js';
import type { Components } from './components.js';
import type { LinkIndex, Lookup, LookupQuery, Remembered, Suspect, VisitorRecord } from './linker.js';

export class StoreIndex implements LinkIndex {
  constructor(
    private readonly store: Store,
    private readonly accountId: string,
    private readonly now: number,
  ) {}

  tokenOwner(tokenHash: string): Promise<string | null> {
    return this.store.identity.tokenOwner(this.accountId, tokenHash);
  }

  lookup(q: LookupQuery): Promise<Lookup> {
    return this.store.identity.lookup(this.accountId, q);
  }

  async visitor(id: string): Promise<VisitorRecord | null> {
    const d = await this.store.visitors.get(id);
    return d && d.accountId === this.accountId ? toRecord(d) : null;
  }

  async createVisitor(components: Components, suspects: Suspect[], residual: number | null): Promise<string> {
    const id = `iq_${ulid(this.now)}`;
    await this.store.visitors.create({ _id: id, accountId: this.accountId, firstSeenAt: this.now, lastSeenAt: this.now, visitCount: 0, components: [components], suspects, residual, recent: [] });
    return id;
  }

  dropVisitor(id: string): Promise<void> {
    return this.store.visitors.delete(id);
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
    const tokens = merged?.tokens ?? (await this.visitor(from))?.tokens ?? [];
    await Promise.all(tokens.map((t) => this.store.identity.moveToken(this.accountId, t.hash, from, into)));
  }

  async unmerge(from: string, into: string): Promise<void> {
    if (!(await this.store.identity.claimMerge(this.accountId, 'unmerge', from, into, this.now))) return;
    const restored = await this.store.visitors.unmerge(from, into);
    await Promise.all((restored?.tokens ?? []).map((t) => this.store.identity.moveToken(this.accountId, t.hash, into, from)));
  }

  remember(r: Remembered): Promise<void> {
    return this.store.identity.remember(this.accountId, r, this.now);
  }
}
