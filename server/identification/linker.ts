// Deciding which visitor a device is.
//
// 1. A device token the agent stored names its visitor, when the fingerprint
//    agrees with that visitor (a copied token is not believed) and the token
//    does not take turns with an older token of the same visitor (two devices
//    merged by fingerprint do; one device's tokens follow each other): then
//    the later token moves to a visitor of its own, or, when it came with a
//    visitor merged into this one, that merge is undone.
// 2. Otherwise (no token, a new one, or one not believed) every visitor that
//    looks like the device is scored against "a device never seen" with the
//    evidence model of evidence.ts (how often it visits, how many devices
//    share the fingerprint, storage, drift, network, and the customer's
//    linkedId), and the visit goes to the best one when its probability
//    clears LINK_P. The visitors a visit's linkedId was seen on join the
//    candidates, so a device that lost its storage on a network it never
//    used is still found; they are scored like any other (a fingerprint that
//    disagrees is no candidate), so a linkedId never joins two devices.
// 3. Else a new visitor, claimed by a unique insert of its token so that
//    concurrent first visits of one device end up as one visitor. The
//    visitors that nearly won are kept as its suspects: while it is young,
//    each of its later visits (by its token or its fingerprint) adds to
//    their evidence (its networks against theirs, their silence since it
//    appeared), and once one of them clears MERGE_P the new visitor is
//    merged into it (split healing): its id becomes an alias of the older
//    one, and a survivor that is itself a young split is weighed on the same
//    visit, so that a chain of splits collapses towards the first id. A
//    private window's token is never a sign of a second device.
//
// The index is abstract so the accuracy benchmark runs this same code.
import { exactKey, groupKey, isMobile, modelKey, partialKeys, type Components } from './components.js';
import {
  features,
  keepsCookie,
  logOddsOf,
  MODEL,
  networkScore,
  posterior,
  type CandidateFacts,
  type Scored,
  type VisitFacts,
  type VisitNetwork,
} from './evidence.js';
import type { Lookup, LookupQuery, Remembered } from '../store/identity.js';
import { followMerges, type Suspect, type TokenUse } from '../store/visitors.js';
import { similarity, tokenCheck, type Similarity } from './matcher.js';

/** Probability a fingerprint link needs (against every other candidate and a new device). */
export const LINK_P = 0.85;
/** Probability a suspect needs before a young visitor is merged into it. */
export const MERGE_P = 0.9;
/**
 * The high-recall id (highRecallVisitorId): a visitor created because no
 * candidate reached LINK_P joins the high-recall group of its best candidate
 * from this posterior, and a young visitor whose later visits raise its best
 * suspect's posterior to HIGH_RECALL_LATER_P (short of MERGE_P) joins that
 * suspect's group. A group is named by its first visitor; every visit of a
 * visitor answers its visitor's group, so it never splits what visitorId
 * joins (bench/accuracy/highRecall.ts measures the trade).
 */
export const HIGH_RECALL_BORN_P = 0.7;
export const HIGH_RECALL_LATER_P = 0.7;
/** Smallest similarity scored at all; below it a candidate is a different device. */
export const MIN_SCORE = 0.75;
/** Suspects kept per new visitor, and the smallest probability worth keeping. */
export const SUSPECTS_CAP = 8;
const SUSPECT_MIN_P = 0.003;
/** A visitor stops looking for its predecessor after this many visits or days. */
export const YOUNG_VISITS = 20;
const YOUNG_DAYS = 60;
/** Splits of splits re-joined on one visit (A ← B ← C ← D). */
const CHAIN_HOPS = 3;
/** Candidates scored per visit (the best by similarity). */
const CANDIDATES_CAP = 24;
/** Other candidates within this much similarity of one count as its look-alikes. */
const LOOKALIKE_SLACK = 0.02;

const DAY = 86_400_000;

export interface VisitorRecord extends CandidateFacts {
  id: string;
  linked: string[];
  /** The last component sets, newest first. */
  components: Components[];
  tokens: TokenUse[];
  /** Set when merged into another visitor: its id is then an alias. */
  mergedInto: string | null;
  /** The high-recall group it joined (its first visitor's id); null: its own. */
  highRecall: string | null;
  suspects: Suspect[];
  /** Log-odds mass of the look-alikes not kept as suspects (null: none), their share of the healing posterior. */
  residual: number | null;
}

export interface LinkIndex {
  tokenOwner(tokenHash: string): Promise<string | null>;
  lookup(q: LookupQuery): Promise<Lookup>;
  /** A visitor of this account as stored (aliases not followed); null when unknown. */
  visitor(id: string): Promise<VisitorRecord | null>;
  /** A new visitor; `highRecall`: the high-recall group it joins (null: a group of its own). */
  createVisitor(components: Components, suspects: Suspect[], residual: number | null, highRecall?: string | null): Promise<string>;
  /** Removes a visitor that lost the race for its token (it has no visits). */
  dropVisitor(id: string): Promise<void>;
  /** Unique-insert claim of an unmapped token; returns its owner afterwards. */
  claimToken(tokenHash: string, visitorId: string): Promise<string>;
  /** Re-points a token from `from` to `to` unless it changed meanwhile; returns its owner afterwards. */
  moveToken(tokenHash: string, from: string, to: string): Promise<string>;
  /** Makes `from` an alias of `into` (idempotent); `from`'s tokens then name `into`. */
  merge(from: string, into: string, now: number): Promise<void>;
  /** Undoes merge(from, into): `from` and its tokens stand alone again. */
  unmerge(from: string, into: string): Promise<void>;
  /** Indexes what `remember` learnt from a visit. */
  remember(r: Remembered): Promise<void>;
}

export interface Visit {
  components: Components;
  tokenHash: string | null;
  /**
   * The visit's other token (the device cookie beside the agent's token, or the agent's beside the cookie linking went
   * by, or a cookie issued now): the same browser's, so it names the matched visitor after the visit.
   */
  otherToken?: string | null;
  /** Through the first-party proxy: the device cookie's token hash, presented by the browser or issued on this visit. */
  cookie?: string | null;
  /** The browser presented that cookie (it was not issued on this visit). */
  cookiePresented?: boolean;
  /** Hash of the customer's linkedId (service.ts linkedHash); null without one, or when the project does not use it. */
  linkedId: string | null;
  network: VisitNetwork;
  incognito: boolean;
  now: number;
}

export type MatchKind = 'token' | 'exact' | 'fuzzy' | 'new';

export interface Match {
  visitorId: string;
  kind: MatchKind;
  /**
   * The decision's own probability that the visitor is this device's:
   * the posterior of a fingerprint link, P(new device) for a new visitor,
   * and for a token 1 − P(the visitor is a split of a suspect).
   */
  p: number;
  /** The token named a different device and was not believed. */
  tokenRejected: boolean;
  /** The token named a visitor but the visit carried too few signals to back it (a copied token sent on its own). */
  uncorroborated?: true;
  /** A young visitor was merged into `visitorId` on this visit. */
  mergedFrom?: string;
  /** The token was told apart from the visitor it named (a merge undone, or look-alikes separated). */
  separated?: boolean;
  /** A young visitor's suspects after this visit's evidence (to store with the visit). */
  suspects?: Suspect[];
  /** The high-recall group the matched visitor joins on this visit (recordVisit keeps the first it joined). */
  highRecall?: string;
  /** The scored candidates (best first), for diagnostics and the benchmark. */
  scored?: Scored[];
}

const logSumExp = (xs: number[]) => {
  const m = Math.max(...xs);
  return m + Math.log(xs.reduce((t, x) => t + Math.exp(x - m), 0));
};

/** Follows an alias to the visitor that survives. */
const resolve = (index: LinkIndex, id: string): Promise<VisitorRecord | null> => followMerges(id, (x) => index.visitor(x));

/**
 * Whether a token and an older one take turns: the older one was presented
 * again after this one's last visit. A private window's token takes turns
 * with the device's own by nature, so it never shows a second device.
 */
function interleaved(tokens: TokenUse[], use: TokenUse, incognito: boolean): TokenUse | undefined {
  if (incognito) return undefined;
  return tokens.find((t) => !t.ephemeral && t.first < use.first && t.last > use.last);
}

export async function link(index: LinkIndex, visit: Visit): Promise<Match> {
  const { components, tokenHash } = visit;
  let tokenRejected = false;
  if (tokenHash) {
    const owner = await index.tokenOwner(tokenHash);
    const v = owner ? await resolve(index, owner) : null;
    if (v) {
      const check = tokenCheck(v.components, components);
      if (check === 'consistent') return byToken(index, v, tokenHash, visit);
      // Too few signals to tell this device from any other: a visitor of its own, linked to nobody by what little it
      // sent and suspecting nobody (healing it into the token's visitor later would hand the attacker the id after all).
      if (check === 'uncorroborated') {
        const alone = await index.createVisitor(components, [], null);
        return { visitorId: alone, kind: 'new', p: 0.5, tokenRejected: true, uncorroborated: true };
      }
      tokenRejected = true;
    }
  }
  const scoring = await scoreCandidates(index, visit, visit.now, [], null);
  const { scored, candidates, exact, pBest, pNew, best } = scoring;
  if (best >= 0 && pBest >= LINK_P) {
    const chosen = scored[best]!.visitorId;
    const isExact = exact !== null && candidates.some((c) => c.v.id === chosen && exactKey(c.v.components[0]!) === exact);
    const linked: Match = { visitorId: chosen, kind: isExact ? 'exact' : 'fuzzy', p: pBest, tokenRejected, scored };
    // A young visitor found by its fingerprint is visited all the same: its suspects weigh this visit too.
    const v = candidates.find((c) => c.v.id === chosen)!.v;
    if (!v.suspects.length) return linked;
    const healed = await heal(index, v, visit);
    return {
      ...linked,
      ...(healed.mergedFrom ? { visitorId: healed.visitorId, mergedFrom: healed.mergedFrom } : {}),
      suspects: healed.suspects,
      ...(healed.highRecall ? { highRecall: healed.highRecall } : {}),
    };
  }
  const kept = scored.filter((s) => Math.exp(s.logOdds) * pNew >= SUSPECT_MIN_P).slice(0, SUSPECTS_CAP);
  const suspects = kept.map((s) => ({ id: s.visitorId, logOdds: s.logOdds, net: 0, since: visit.now }));
  const dropped = scored.filter((s) => !kept.includes(s));
  const residual = dropped.length ? logSumExp(dropped.map((s) => s.logOdds)) : null;
  const nearest = best >= 0 && pBest >= HIGH_RECALL_BORN_P ? candidates.find((c) => c.v.id === scored[best]!.visitorId)?.v : undefined;
  // Create first, then claim: the winner's visitor always exists when a loser joins it.
  const created = await index.createVisitor(components, suspects, residual, nearest ? groupOf(nearest) : null);
  if (tokenHash && !tokenRejected) {
    const owner = await index.claimToken(tokenHash, created);
    // A token still naming a visitor the account no longer has (its data is being deleted) passes to the new one.
    if (owner !== created && !(await resolve(index, owner)) && (await index.moveToken(tokenHash, owner, created)) === created) {
      return { visitorId: created, kind: 'new', p: pNew, tokenRejected, scored };
    }
    if (owner !== created) {
      await index.dropVisitor(created);
      return { visitorId: owner, kind: 'token', p: pNew, tokenRejected, scored };
    }
  }
  return { visitorId: created, kind: 'new', p: pNew, tokenRejected, scored };
}

/** What scoring asks the index about a visit (the service reads it ahead, with the visit's tokens). */
export function lookupQuery(visit: Pick<Visit, 'components' | 'network' | 'now' | 'linkedId'>): LookupQuery {
  const { components } = visit;
  return {
    now: visit.now,
    exact: exactKey(components),
    partials: partialKeys(components),
    group: groupKey(components),
    model: modelKey(components),
    prefix: visit.network.prefix,
    asn: visit.network.asn,
    linked: visit.linkedId,
  };
}

/**
 * Every visitor that looks like the visit's device, scored against a new
 * device. `at` is the moment the device's storage state is judged at (the
 * visit; for healing, when the young visitor appeared); `extra` are more
 * visitors to consider and `exclude` one not to.
 */
async function scoreCandidates(index: LinkIndex, visit: Visit, at: number, extra: string[], exclude: string | null) {
  const { components } = visit;
  const query = lookupQuery(visit);
  const { exact } = query;
  const found = await index.lookup(query);
  const ids = [...new Set([...found.onPrefix, ...found.holders, ...found.partials, ...found.onAsn, ...found.linked, ...extra])];
  const visitors = (await Promise.all(ids.map((id) => resolve(index, id)))).filter((v): v is VisitorRecord => v !== null && v.id !== exclude);
  const facts: VisitFacts = {
    now: at,
    network: visit.network,
    incognito: visit.incognito,
    hasToken: visit.tokenHash !== null,
    proxied: !!visit.cookie,
    prefixCrowd: found.prefixCrowd,
    asnCrowd: found.asnCrowd,
    account: found.account,
    group: found.group,
    holders: found.holderCount,
    linked: visit.linkedId,
  };
  const mobile = isMobile(components);
  const seen = new Set<string>();
  const candidates = visitors
    .filter((v) => !seen.has(v.id) && seen.add(v.id))
    .map((v) => ({ v, sim: bestSimilarity(v, components) }))
    .filter((c): c is { v: VisitorRecord; sim: Similarity } => c.sim !== null && c.sim.score >= MIN_SCORE)
    .sort((a, b) => b.sim.score - a.sim.score)
    .slice(0, CANDIDATES_CAP);
  const scored: Scored[] = candidates
    .map(({ v, sim }) => {
      // The visit's look-alikes from v's point of view: the other candidates at least about as similar.
      const lookalikes = candidates.filter((c) => c.v !== v && c.sim.score >= sim.score - LOOKALIKE_SLACK).map((c) => c.v);
      const f = features(v, facts, { ...sim, exact: exact !== null && exactKey(v.components[0]!) === exact, mobile }, lookalikes);
      return { visitorId: v.id, logOdds: logOddsOf(f), features: f };
    })
    .sort((a, b) => b.logOdds - a.logOdds);
  return { exact, candidates, scored, facts, ...posterior(scored) };
}

function bestSimilarity(v: VisitorRecord, components: Components): Similarity | null {
  let best: Similarity | null = null;
  for (const h of v.components) {
    const s = similarity(h, components);
    if (s.forbidden || s.overlap === 0) continue;
    if (!best || s.score > best.score) best = s;
  }
  return best;
}

async function byToken(index: LinkIndex, v: VisitorRecord, tokenHash: string, visit: Visit): Promise<Match> {
  const use = v.tokens.find((t) => t.hash === tokenHash);
  const other = use && interleaved(v.tokens, use, visit.incognito);
  if (use && other) {
    if (use.via) {
      // It came with a merged visitor and takes turns with this visitor's own: the merge was wrong.
      await index.unmerge(use.via, v.id);
      return { visitorId: use.via, kind: 'token', p: 0.5, tokenRejected: false, separated: true };
    }
    // Told apart from the look-alike it was merged with: its first visit as itself.
    const own = await index.createVisitor(visit.components, [], null);
    const owner = await index.moveToken(tokenHash, v.id, own);
    if (owner === own) return { visitorId: own, kind: 'new', p: 0.5, tokenRejected: false, separated: true };
    // A concurrent visit of this device moved it first: join that visitor.
    await index.dropVisitor(own);
    return { visitorId: owner, kind: 'token', p: 0.5, tokenRejected: false, separated: true };
  }
  if (!v.suspects.length) return { visitorId: v.id, kind: 'token', p: 1, tokenRejected: false };
  return heal(index, v, visit);
}

/**
 * A young visitor's later visit: adds evidence for each of its suspects and
 * merges it into the one whose probability clears MERGE_P. The evidence of a
 * visit is which history explains its network better: the suspect's and the
 * young visitor's together (they are one device) or the young visitor's
 * alone (a device of its own). Coming back to the suspect's home counts for
 * the suspect, settling somewhere the suspect never was counts against it,
 * and a network both use is neutral. A suspect that keeps silent while the
 * young visitor keeps visiting gains the odds of that silence, e^(its visit
 * rate × the time), capped because the rate is a rough estimate. A suspect
 * seen with a token of its own after the young visitor appeared is another
 * device and drops out.
 */
async function heal(index: LinkIndex, young: VisitorRecord, visit: Visit, hops = 0, chain?: Chain): Promise<Match> {
  const aged = young.visitCount >= YOUNG_VISITS || visit.now - young.firstSeenAt > YOUNG_DAYS * DAY;
  if (aged) return { visitorId: young.id, kind: 'token', p: 1, tokenRejected: false, suspects: [] };
  const resolved = await Promise.all(young.suspects.map(async (s) => ({ s, u: await resolve(index, s.id) })));
  // A private window's token on the suspect is the device's too (it may have been linked there): no sign of another device.
  const own = (t: TokenUse) => t.ephemeral || (t.via !== undefined && (t.via === young.id || t.via === chain?.via));
  const live = resolved.filter(
    (x): x is { s: Suspect; u: VisitorRecord } => !!x.u && x.u.id !== young.id && !x.u.tokens.some((t) => !own(t) && t.last > x.s.since),
  );
  const { prefix, kind } = visit.network;
  let evidence = (_u: VisitorRecord) => 0;
  if (prefix !== null && kind !== 'anonymizer' && live.length) {
    // The devices like this one, as the decision sees them: how expected this network is of a device like it.
    const { facts, candidates } = await scoreCandidates(
      index,
      visit,
      visit.now,
      live.map((x) => x.u.id),
      young.id,
    );
    // Both sides against the same look-alikes: the other candidates.
    const others = (u: VisitorRecord) => candidates.filter((c) => c.v.id !== u.id).map((c) => c.v);
    evidence = (u) => networkScore({ ...together(u, young), tokens: u.tokens }, facts, others(u)) - networkScore(young, facts, others(u));
  }
  const suspects = live.map(({ s, u }) => ({ ...s, id: u.id, net: (s.net ?? 0) + evidence(u) }));
  const totals = suspects.map((s, i) => ({ logOdds: s.logOdds + s.net + silence(live[i]!.u, s.since, chain?.until ?? visit.now) }));
  const { best, pBest, pNew } = posterior(totals, young.residual);
  if (best >= 0 && pBest >= MERGE_P) {
    const into = suspects[best]!.id;
    await index.merge(young.id, into, visit.now);
    const merged: Match = { visitorId: into, kind: 'token', p: pBest, tokenRejected: false, mergedFrom: young.id };
    if (hops >= CHAIN_HOPS) return merged;
    // A chain collapses towards the first id. The young visitor's other suspects that were splits of
    // the survivor (A ← B, then C, now found to be A's) weigh the same visit: their silence up to C's
    // first visit, C's tokens being the device's own.
    const earlier = live.filter(({ u }) => u.id !== into && u.suspects.some((s) => s.id === into || s.id === young.id));
    for (const { u } of earlier) await heal(index, u, visit, hops + 1, { via: young.id, until: young.firstSeenAt });
    // And a survivor that is itself a young split weighs it too.
    const survivor = await index.visitor(into);
    if (!survivor?.suspects.length || survivor.mergedInto) return merged;
    const next = await heal(index, survivor, visit, hops + 1);
    return next.mergedFrom ? { ...next, mergedFrom: young.id } : { ...merged, ...(next.suspects ? { suspects: next.suspects } : {}) };
  }
  const nearest = best >= 0 && pBest >= HIGH_RECALL_LATER_P && !young.highRecall ? live[best]!.u : undefined;
  return {
    visitorId: young.id,
    kind: 'token',
    p: suspects.length ? pNew : 1,
    tokenRejected: false,
    suspects,
    ...(nearest ? { highRecall: groupOf(nearest) } : {}),
  };
}

/** The high-recall group a visitor stands in: the one it joined, or its own. */
export const groupOf = (v: Pick<VisitorRecord, 'id' | 'highRecall'>): string => v.highRecall ?? v.id;

/** A split weighed when a later split of the same device was merged: whose tokens are the device's own, and until when the suspect kept silent. */
interface Chain {
  via: string;
  until: number;
}

/** The network history of two visitors as one device's. */
function together(u: VisitorRecord, young: VisitorRecord): CandidateFacts {
  const add = <T extends { n: number }>(a: T[], b: T[], same: (x: T, y: T) => boolean) => [
    ...a.map((x) => ({ ...x, n: x.n + (b.find((y) => same(x, y))?.n ?? 0) })),
    ...b.filter((y) => !a.some((x) => same(x, y))),
  ];
  return {
    ...u,
    visitCount: u.visitCount + young.visitCount,
    prefixes: add(u.prefixes, young.prefixes, (x, y) => x.p === y.p),
    asns: add(u.asns, young.asns, (x, y) => x.a === y.a),
    // A network both used was new to the device only once.
    novelPrefixes: u.novelPrefixes + young.novelPrefixes - young.prefixes.filter((y) => u.prefixes.some((x) => x.p === y.p)).length,
    novelAsns: u.novelAsns + young.novelAsns - young.asns.filter((y) => u.asns.some((x) => x.a === y.a)).length,
  };
}

/**
 * log of how much more likely u's silence since the young visitor appeared
 * is if u lives on as it than if u is another device. Another device shows
 * u's token at its next visit unless it lost its storage by then (cleared,
 * or WebKit's ITP after a week away): P(no u token by t) = q + (1 − q)·e^(−r·(t − u's last visit)),
 * with r u's visit rate. The increment from the young visitor's first visit
 * to now is bounded by 1/q, so a WebKit visitor away for long gains little,
 * unless it kept the first-party proxy's device cookie, which ITP spares.
 */
function silence(u: VisitorRecord, since: number, now: number): number {
  const rate = Math.max(0, u.visitCount - 1) / ((u.lastSeenAt - u.firstSeenAt) / DAY + MODEL.rateDays);
  const itp = u.webkit && !keepsCookie(u);
  const quiet = (t: number) => {
    const days = Math.max(0, t - u.lastSeenAt) / DAY;
    const q = Math.min(0.95, MODEL.clearRate + MODEL.clearPerDay * days + (itp && days > MODEL.itpDays ? MODEL.itpLoss : 0));
    return q + (1 - q) * Math.exp(-rate * days);
  };
  return Math.max(0, Math.log(quiet(since) / quiet(now)));
}

/** What the visit changes in the visitor: its networks, tokens and last component sets. */
export function withVisit(
  v: VisitorRecord,
  visit: Visit,
  tokenHash: string | null,
): Pick<VisitorRecord, 'prefixes' | 'asns' | 'novelPrefixes' | 'novelAsns' | 'tokens' | 'linked'> {
  const { prefix, asn } = visit.network;
  const now = visit.now;
  // The other token's turns are kept too, so that a device merged with another is told apart by whichever token it
  // comes back with (a cookie outlives the agent's storage); not when the visit's token was not believed.
  const other = tokenHash === visit.tokenHash ? (visit.otherToken ?? null) : null;
  const keep = (tokens: TokenUse[], hash: string | null) => {
    if (!hash) return tokens;
    const prior = tokens.find((t) => t.hash === hash);
    return bump(tokens, (t) => t.hash === hash, tokenUse(prior, hash, visit), TOKENS_CAP);
  };
  const prefixUse = prefix ? v.prefixes.find((p) => p.p === prefix) : undefined;
  const asnUse = asn !== null ? v.asns.find((a) => a.a === asn) : undefined;
  return {
    prefixes: prefix ? bump(v.prefixes, (p) => p.p === prefix, { p: prefix, n: (prefixUse?.n ?? 0) + 1, last: now }, PREFIXES_CAP) : v.prefixes,
    asns: asn !== null ? bump(v.asns, (a) => a.a === asn, { a: asn, n: (asnUse?.n ?? 0) + 1, last: now }, ASNS_CAP) : v.asns,
    novelPrefixes: v.novelPrefixes + (prefix && !prefixUse ? 1 : 0),
    novelAsns: v.novelAsns + (asn !== null && !asnUse ? 1 : 0),
    tokens: tokenHash === visit.tokenHash ? unreturned(keep(keep(v.tokens, tokenHash), other), visit) : keep(v.tokens, tokenHash),
    linked: visit.linkedId && v.linked[0] !== visit.linkedId ? bump(v.linked, (l) => l === visit.linkedId, visit.linkedId, LINKED_CAP) : v.linked,
  };
}

/**
 * A proxied visit that presented no cookie: the cookies issued to the visitor
 * before and never presented were not kept (the browser refuses cookies, or
 * cleared them), and say so (evidence.ts keptTokens).
 */
function unreturned(tokens: TokenUse[], visit: Visit): TokenUse[] {
  const marked = (t: TokenUse) => t.issued && !t.unreturned && t.hash !== visit.cookie;
  if (!visit.cookie || visit.cookiePresented || !tokens.some(marked)) return tokens;
  return tokens.map((t) => (marked(t) ? { ...t, unreturned: true } : t));
}

/**
 * A token's use after this visit: ephemeral while it was only ever seen in
 * private windows; the device cookie marked, and `issued` until a visit
 * presents it (a browser that keeps no cookie never does, and a cookie it
 * never kept says nothing of its storage).
 */
function tokenUse(prior: TokenUse | undefined, hash: string, visit: Visit): TokenUse {
  const isCookie = hash === visit.cookie;
  const {
    ephemeral: _,
    issued: __,
    ...use
  } = {
    ...prior,
    hash,
    first: prior?.first ?? visit.now,
    last: visit.now,
    ...(isCookie ? { cookie: true as const } : {}),
  };
  const issued = isCookie && !visit.cookiePresented && (!prior || prior.issued);
  const marked = issued ? { ...use, issued: true as const } : use;
  return visit.incognito && (!prior || prior.ephemeral) ? { ...marked, ephemeral: true } : marked;
}

/** Networks remembered per visitor: home, work, a phone's usual carriers and their pools. */
export const PREFIXES_CAP = 8;
export const ASNS_CAP = 6;
/**
 * Tokens remembered per visitor: enough to see two browsers alternate among a few more look-alikes, each with its agent
 * token and device cookie, few enough to stay small.
 */
export const TOKENS_CAP = 16;
/** linkedIds remembered per visitor: a shared computer's few family members. */
export const LINKED_CAP = 4;

/** Puts `item` first, drops the entry it replaces, keeps the `cap` most recent. */
function bump<T>(list: T[], same: (x: T) => boolean, item: T, cap: number): T[] {
  return [item, ...list.filter((x) => !same(x))].slice(0, cap);
}

/**
 * What to index after the visit is recorded. A visit by a token the visitor
 * already holds, with the same stable components and known networks, adds
 * nothing: the index already holds it all, and a returning device costs no
 * index write.
 */
export function remembered(v: VisitorRecord, match: Match, visit: Visit, created: boolean): Remembered {
  const exact = exactKey(visit.components);
  const { prefix, asn } = visit.network;
  const tokenHash = visit.tokenHash && !match.tokenRejected ? visit.tokenHash : null;
  const newPrefix = prefix && !v.prefixes.some((p) => p.p === prefix) ? prefix : null;
  const newAsn = asn !== null && !v.asns.some((a) => a.a === asn) ? asn : null;
  const sameComponents = !created && exact !== null && v.components[0] !== undefined && exactKey(v.components[0]) === exact;
  const knownToken = tokenHash !== null && v.tokens.some((t) => t.hash === tokenHash);
  const settled = sameComponents && (tokenHash === null || knownToken) && !match.mergedFrom;
  return {
    visitorId: match.visitorId,
    created,
    tokenHash: knownToken && !match.mergedFrom ? null : tokenHash,
    exact: settled ? null : exact,
    heldExact: !created && exact !== null && v.components.some((c) => exactKey(c) === exact),
    group: groupKey(visit.components),
    model: modelKey(visit.components),
    partials: settled ? [] : partialKeys(visit.components),
    newPrefix,
    newAsn,
    linked: visit.linkedId && !v.linked.includes(visit.linkedId) ? visit.linkedId : null,
  };
}
