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
//
// An entry is compact (issue 27: 50,000 of them by default): the document in
// its stored form (server/store/visitors.ts) as deflated BSON, without
// its current page of visit summaries, which is most of a document and
// which a visit does not need unless it starts a new page (the finished page
// then moves to visitPages: such a visit reads the visitor). A visit
// continuing the page appends its summary to the stored page. Measured with
// 50,000 visitors of three component sets and 20 recent visits each: 329 MB
// of RSS as BSON, 160 MB deflated (about 1.2 KB a document); deflating and
// inflating cost about 40 µs a visit.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { BSON } from 'mongodb';
import { LRUCache } from 'lru-cache';
import type { CacheCounts } from '../metrics/registry.js';
import { decodeVisitor, encodeVisitor, type StoredVisitorDoc, type VisitorDoc } from '../store/visitors.js';
import { VISITS_PER_PAGE } from '../store/visits.js';

interface TokenEntry {
  visitorId: string;
  /** The visitor's revision when the token was last seen naming it. */
  rev: number;
}

interface DocEntry {
  accountId: string;
  rev: number;
  /** The document without its visit summaries (`visits: []`), as deflated BSON. */
  packed: Uint8Array;
}

export class VisitorCache {
  private readonly docs: LRUCache<string, DocEntry> | null;
  private readonly tokens: LRUCache<string, TokenEntry> | null;
  // Plain numbers, read by a metrics scrape (metrics/registry.ts).
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  /** `size` visitors (and twice as many tokens: the agent's and a proxy's cookie); 0 keeps nothing. */
  constructor(size: number) {
    this.docs = size > 0 ? new LRUCache({ max: size, dispose: (_v, _k, reason) => void (reason === 'evict' && this.evictions++) }) : null;
    this.tokens = size > 0 ? new LRUCache({ max: 2 * size }) : null;
  }

  /** The visitor a token named and its document as of then, if this process still holds both at that revision. */
  byToken(accountId: string, tokenHash: string): VisitorDoc | null {
    const token = this.tokens?.get(`${accountId}|${tokenHash}`);
    const entry = token && this.docs?.get(token.visitorId);
    return this.counted(entry && entry.accountId === accountId && entry.rev === token.rev ? served(entry) : null);
  }

  /** The newest document this process wrote or read of a visitor, if held. */
  doc(visitorId: string): VisitorDoc | null {
    const entry = this.docs?.get(visitorId);
    return entry ? served(entry) : null;
  }

  /** Hits and misses are of tokens: whether identify could name a device's visitor without reading the database. */
  private counted(doc: VisitorDoc | null): VisitorDoc | null {
    if (doc) this.hits++;
    else if (this.docs) this.misses++;
    return doc;
  }

  /** Token lookups served and not served since start, visitors dropped to make room, and visitors held. */
  get counts(): CacheCounts {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, size: this.size };
  }

  /** After a write that held: the document as it now is, and the tokens seen naming it. */
  remember(doc: VisitorDoc, tokenHashes: readonly string[]): void {
    if (!this.docs) return;
    const rev = doc.rev ?? 0;
    // Copied to memory of its own: zlib's output may be a view of a larger block, which the entry would keep whole.
    const packed = new Uint8Array(deflateRawSync(BSON.serialize(encodeVisitor({ ...doc, visits: [] }))));
    this.docs.set(doc._id, { accountId: doc.accountId, rev, packed });
    this.rememberTokens(doc.accountId, doc._id, tokenHashes);
  }

  /** Tokens seen naming a visitor of the account, at the revision held of it. */
  rememberTokens(accountId: string, visitorId: string, tokenHashes: readonly string[]): void {
    const entry = this.docs?.peek(visitorId);
    if (!entry || entry.accountId !== accountId) return;
    for (const t of tokenHashes) this.tokens!.set(`${accountId}|${t}`, { visitorId, rev: entry.rev });
  }

  /** A visitor this process can no longer vouch for (a failed proof, a merge, a token moved). */
  forget(visitorId: string): void {
    this.docs?.delete(visitorId);
  }

  get size(): number {
    return this.docs?.size ?? 0;
  }
}

/** The document, unless its next visit starts a page: that visit must move the page, which the entry does not hold. */
function served(entry: DocEntry): VisitorDoc | null {
  const doc = decodeVisitor(BSON.deserialize(inflateRawSync(entry.packed)) as StoredVisitorDoc);
  return doc.visitCount % VISITS_PER_PAGE === 0 ? null : doc;
}
