// What this process last knew of recent visitors: their documents, and which
// visitor their device tokens named, so that a returning device is identified
// without reading either (issue: two round trips, the visit's write and the
// event's insert). Nothing here is trusted on its own word:
// - a token entry is served only with the visitor document of the revision at
//   which the token was seen naming that visitor, and every change of a
//   visitor (a visit, a merge, a token leaving it, its deletion) bumps `rev`;
// - the compare-and-swap that records the visit is on that revision, so a
//   stale entry makes the write fail, never succeed;
// - before any other write (a new visitor, a token claimed or moved, a
//   merge) linking must have read the database, not this cache.
// A failed proof costs the request one re-run from the database, and the
// entries go.
import { LRUCache } from 'lru-cache';
import type { VisitorDoc } from '../store/visitors.js';

interface TokenEntry {
  visitorId: string;
  /** The visitor's revision when the token was last seen naming it. */
  rev: number;
}

export class VisitorCache {
  private readonly docs: LRUCache<string, VisitorDoc> | null;
  private readonly tokens: LRUCache<string, TokenEntry> | null;

  /** `size` visitors (and twice as many tokens: the agent's and a proxy's cookie); 0 keeps nothing. */
  constructor(size: number) {
    this.docs = size > 0 ? new LRUCache({ max: size }) : null;
    this.tokens = size > 0 ? new LRUCache({ max: 2 * size }) : null;
  }

  /** The visitor a token named and its document as of then, if this process still holds both at that revision. */
  byToken(accountId: string, tokenHash: string): VisitorDoc | null {
    const entry = this.tokens?.get(`${accountId}|${tokenHash}`);
    const doc = entry && this.docs?.get(entry.visitorId);
    return doc && doc.accountId === accountId && (doc.rev ?? 0) === entry.rev ? doc : null;
  }

  /** The newest document this process wrote or read of a visitor, if held. */
  doc(visitorId: string): VisitorDoc | null {
    return this.docs?.get(visitorId) ?? null;
  }

  /** After a write that held: the document as it now is, and the tokens seen naming it. */
  remember(doc: VisitorDoc, tokenHashes: readonly string[]): void {
    if (!this.docs || !this.tokens) return;
    this.docs.set(doc._id, doc);
    for (const t of tokenHashes) this.tokens.set(`${doc.accountId}|${t}`, { visitorId: doc._id, rev: doc.rev ?? 0 });
  }

  /** A visitor this process can no longer vouch for (a failed proof, a merge, a token moved). */
  forget(visitorId: string): void {
    this.docs?.delete(visitorId);
  }

  get size(): number {
    return this.docs?.size ?? 0;
  }
}
