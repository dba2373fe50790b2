// Deciding which visitor a device is, in order (issue 4, FP-STALKER style):
// 1. the stored device token, when the fingerprint agrees with that visitor;
// 2. an exact match of all stable components;
// 3. a fuzzy match among candidates found through partial keys;
// 4. a new visitor, claimed by a unique insert so that concurrent first
//    visits of one device end up as one visitor.
// The index is abstract so the accuracy benchmark runs this same code.
import { exactKey, partialKeys, type Components } from './components.js';
import type { MatchKind } from './confidence.js';
import { decide, tokenConsistent } from './matcher.js';

export interface LinkIndex {
  tokenOwner(tokenHash: string): Promise<string | null>;
  exactOwner(key: string): Promise<string | null>;
  candidates(partialKeys: string[]): Promise<string[]>;
  /** The visitor's last component sets, newest first; null when not a visitor of this account. */
  history(visitorId: string): Promise<Components[] | null>;
  createVisitor(components: Components): Promise<string>;
  dropVisitor(visitorId: string): Promise<void>;
  /** Unique-insert claims; return the owner after the attempt. */
  claimExact(key: string, visitorId: string): Promise<string>;
  claimToken(tokenHash: string, visitorId: string): Promise<string>;
  setToken(tokenHash: string, visitorId: string): Promise<void>;
  addPartials(partialKeys: string[], visitorId: string): Promise<void>;
}

export interface Match {
  visitorId: string;
  kind: MatchKind;
  score?: number;
  margin?: number;
  /** The token named a different device and was not believed. */
  tokenRejected: boolean;
  /**
   * The device's stable components equal the visitor's last ones and its
   * token already names it: the index already holds everything `remember`
   * would write.
   */
  indexed?: boolean;
}

export async function link(index: LinkIndex, components: Components, tokenHash: string | null): Promise<Match> {
  let tokenRejected = false;
  if (tokenHash) {
    const vid = await index.tokenOwner(tokenHash);
    const hist = vid ? await index.history(vid) : null;
    if (vid && hist) {
      if (tokenConsistent(hist, components)) {
        const indexed = exactKey(components) !== null && exactKey(components) === exactKey(hist[0]!);
        return { visitorId: vid, kind: 'token', tokenRejected, indexed };
      }
      tokenRejected = true;
    }
  }
  const exact = exactKey(components);
  if (exact) {
    const vid = await index.exactOwner(exact);
    const hist = vid ? await index.history(vid) : null;
    if (vid && hist) {
      // Same stable components as last time: the partial keys are indexed already.
      const indexed = exact === exactKey(hist[0]!) && !tokenHash;
      return { visitorId: vid, kind: 'exact', tokenRejected, indexed };
    }
  }
  const ids = await index.candidates(partialKeys(components));
  if (ids.length) {
    const candidates = [];
    for (const id of ids) {
      const hist = await index.history(id);
      if (hist) candidates.push({ visitorId: id, history: hist });
    }
    const d = decide(candidates, components);
    if (d.visitorId) return { visitorId: d.visitorId, kind: 'fuzzy', score: d.score, margin: d.margin, tokenRejected };
  }
  // Create first, then claim: the winner's visitor always exists when a loser joins it.
  const visitorId = await index.createVisitor(components);
  const claimToken = tokenHash && !tokenRejected ? tokenHash : null;
  const owner = exact ? await index.claimExact(exact, visitorId) : claimToken ? await index.claimToken(claimToken, visitorId) : visitorId;
  if (owner !== visitorId) {
    await index.dropVisitor(visitorId);
    return { visitorId: owner, kind: exact ? 'exact' : 'token', tokenRejected };
  }
  return { visitorId, kind: 'new', tokenRejected };
}

/** After the visit is recorded: make this device findable next time. */
export async function remember(index: LinkIndex, match: Match, components: Components, tokenHash: string | null): Promise<void> {
  if (match.indexed) return;
  const exact = exactKey(components);
  await Promise.all([
    exact && match.kind !== 'new' ? index.claimExact(exact, match.visitorId) : null,
    index.addPartials(partialKeys(components), match.visitorId),
    // A token that named another device stays with that device.
    tokenHash && !match.tokenRejected ? index.setToken(tokenHash, match.visitorId) : null,
  ]);
}
