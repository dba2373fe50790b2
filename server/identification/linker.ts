// Deciding which visitor a device is, in order (issue 4, FP-STALKER style):
// 1. the stored device token, when the fingerprint agrees with that visitor;
// 2. an exact match of all stable components;
// 3. a fuzzy match among candidates found through partial keys;
// 4. a new visitor, claimed by a unique insert so that concurrent first
//    visits of one device end up as one visitor.
// Steps 2 and 3 link by fingerprint alone, and many devices share theirs
// (same model, OS image and locale: bench/accuracy found 38 %). A device
// that lost its storage usually comes back from a network it used before
// (home, office), a look-alike usually does not, so those links also need
// the visit's network among the visitor's recent ones. The accuracy
// benchmark measured the trade (bench/README.md).
// Look-alikes that got through anyway (an office of identical laptops)
// show themselves later: their tokens keep taking turns on one visitor, which
// one device never does (cleared storage retires the old token, a private
// window's token does not come back). The later token is then moved to a
// visitor of its own.
// The index is abstract so the accuracy benchmark runs this same code.
import { exactKey, partialKeys, type Components } from './components.js';
import type { MatchKind } from './confidence.js';
import type { TokenUse } from '../store/visitors.js';
import { decide, tokenConsistent } from './matcher.js';

export interface LinkIndex {
  tokenOwner(tokenHash: string): Promise<string | null>;
  exactOwner(key: string): Promise<string | null>;
  candidates(partialKeys: string[]): Promise<string[]>;
  /** What the visitor was last seen as; null when not a visitor of this account. */
  history(visitorId: string): Promise<VisitorHistory | null>;
  createVisitor(components: Components): Promise<string>;
  dropVisitor(visitorId: string): Promise<void>;
  /** Unique-insert claims; return the owner after the attempt. */
  claimExact(key: string, visitorId: string): Promise<string>;
  claimToken(tokenHash: string, visitorId: string): Promise<string>;
  setToken(tokenHash: string, visitorId: string): Promise<void>;
  /** Re-points a token from `from` to `to` unless it changed meanwhile; returns its owner afterwards. */
  moveToken(tokenHash: string, from: string, to: string): Promise<string>;
  addPartials(partialKeys: string[], visitorId: string): Promise<void>;
}

export interface VisitorHistory {
  /** The last component sets, newest first. */
  components: Components[];
  /** Networks of recent visits (empty when none was recorded). */
  networks: string[];
  /** Device tokens of recent visits with when each was first and last presented. */
  tokens: TokenUse[];
  firstSeenAt: number;
}

/**
 * Whether the token in `use` and an older token of the visitor take turns:
 * the older one was presented again after this one's last visit. One
 * device's tokens follow each other instead; two devices merged by
 * fingerprint alternate.
 */
function interleaved(tokens: TokenUse[], use: TokenUse): boolean {
  return tokens.some((t) => t.first < use.first && t.last > use.last);
}

/**
 * A fingerprint-only link needs the visit's network among the visitor's
 * recent ones. Without either side's network (unknown address, visitors
 * stored before networks were kept) there is no evidence against it.
 */
function networkAgrees(h: VisitorHistory, network: string | null): boolean {
  return network === null || h.networks.length === 0 || h.networks.includes(network);
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
  /** Token matches: the token was first linked to this visitor by fingerprint, with that link's uncertainty. */
  joinedByFingerprint?: boolean;
}

export async function link(index: LinkIndex, components: Components, tokenHash: string | null, network: string | null): Promise<Match> {
  let tokenRejected = false;
  if (tokenHash) {
    const vid = await index.tokenOwner(tokenHash);
    const hist = vid ? await index.history(vid) : null;
    if (vid && hist) {
      if (tokenConsistent(hist.components, components)) {
        const use = hist.tokens.find((t) => t.hash === tokenHash);
        if (use && interleaved(hist.tokens, use)) {
          // Told apart from the look-alike it was merged with: its first visit as itself.
          const own = await index.createVisitor(components);
          const owner = await index.moveToken(tokenHash, vid, own);
          if (owner === own) return { visitorId: own, kind: 'new', tokenRejected };
          // A concurrent visit of this device moved it first: join that visitor.
          await index.dropVisitor(own);
          return { visitorId: owner, kind: 'token', tokenRejected };
        }
        const indexed = exactKey(components) !== null && exactKey(components) === exactKey(hist.components[0]!);
        // A token that joined the visitor after its first visit got there by fingerprint.
        return { visitorId: vid, kind: 'token', tokenRejected, indexed, joinedByFingerprint: !!use && use.first > hist.firstSeenAt };
      }
      tokenRejected = true;
    }
  }
  const exact = exactKey(components);
  // A look-alike on another network owns this exact key: it must not be claimed for the new visitor.
  let exactTaken = false;
  if (exact) {
    const vid = await index.exactOwner(exact);
    const hist = vid ? await index.history(vid) : null;
    if (vid && hist) {
      if (networkAgrees(hist, network)) {
        // Same stable components as last time: the partial keys are indexed already.
        const indexed = exact === exactKey(hist.components[0]!) && !tokenHash;
        return { visitorId: vid, kind: 'exact', tokenRejected, indexed };
      }
      exactTaken = true;
    }
  }
  const ids = await index.candidates(partialKeys(components));
  if (ids.length) {
    const candidates = [];
    for (const id of ids) {
      const hist = await index.history(id);
      if (hist && networkAgrees(hist, network)) candidates.push({ visitorId: id, history: hist.components });
    }
    const d = decide(candidates, components);
    if (d.visitorId) return { visitorId: d.visitorId, kind: 'fuzzy', score: d.score, margin: d.margin, tokenRejected };
  }
  // Create first, then claim: the winner's visitor always exists when a loser joins it.
  const visitorId = await index.createVisitor(components);
  const claimToken = tokenHash && !tokenRejected ? tokenHash : null;
  const claimExact = exact && !exactTaken ? exact : null;
  const owner = claimExact ? await index.claimExact(claimExact, visitorId) : claimToken ? await index.claimToken(claimToken, visitorId) : visitorId;
  if (owner !== visitorId) {
    await index.dropVisitor(visitorId);
    return { visitorId: owner, kind: claimExact ? 'exact' : 'token', tokenRejected };
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
