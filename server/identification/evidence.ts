// The probability that a visit without a token of its own comes from a known
// visitor rather than from a device never seen before: one score, the log
// of the odds, summed from independent pieces of evidence (a naive Bayes
// model). For a candidate visitor v:
//
//   odds(v) = r_v·T / A                  how often v visits (r_v per day) over the
//                                        account's age T, against A, how many devices
//                                        would show this fingerprint (the anonymity set)
//           × P(storage | v) / P(storage | new)   private window, cleared storage, ITP
//           × P(fingerprint | v)                  drift since v's last visit
//           × P(network | v) / P(network | new)   v's own networks against how many
//                                                 visitors share this one
//           × P(linkedId | v) / P(linkedId | new) the customer's account id, when
//                                                 v was seen with it (linkedEvidence)
//
// A: Good–Turing over the account's exact keys of the same device group
// (model, browser, screen): a key seen on r visitors stands for r* devices,
// r* = (r+1)·N(r+1)/N(r) (N(r): keys held by r visitors). Where most keys
// are unique (desktops with their own fonts and settings) a singleton's r*
// is well below 1 and one exact match is strong evidence; where keys are
// shared (phones of one model) r* is near 1 or more and it is not.
//
// Network: a prefix (IPv4 /24, IPv6 /56) v used before, that few visitors
// share, is strong evidence (a home line); an AS v used before is weak
// evidence (a carrier, a renumbered line); a network v never used costs
// what v's own mobility says (phones change networks, desktops rarely);
// anonymizers (VPN, relays, hosting) say nothing.
//
// The candidates and "a new device" then share the probability:
// P(v) = odds(v) / (1 + Σ odds). Terms and constants are documented where
// they are set; bench/accuracy checks them across perturbed worlds and
// calibrates the result (confidence.ts).
import type { AccountCounts, GroupCounts } from '../store/identity.js';
import type { AsnUse, PrefixUse, TokenUse } from '../store/visitors.js';
import type { Components } from './components.js';
import type { ChangeGroup } from './matcher.js';
import { WEIGHTS } from './weights.js';

export type NetworkKind = 'fixed' | 'mobile' | 'anonymizer';

/** The client's network as identification compares it. */
export interface VisitNetwork {
  /** IPv4 /24 or IPv6 /56 of the client address; null when unknown. */
  prefix: string | null;
  asn: number | null;
  kind: NetworkKind;
}

/** What the model needs to know of a candidate visitor. */
export interface CandidateFacts {
  visitCount: number;
  firstSeenAt: number;
  lastSeenAt: number;
  prefixes: PrefixUse[];
  asns: AsnUse[];
  /** Visits on a prefix / an AS the visitor had not used before. */
  novelPrefixes: number;
  novelAsns: number;
  /** WebKit browser (Safari, any iOS browser): ITP deletes its storage after 7 days without a visit. */
  webkit: boolean;
  /** Hashes of the customer's linkedIds the visitor was seen with (the newest few). */
  linked?: readonly string[];
}

export interface VisitFacts {
  now: number;
  network: VisitNetwork;
  /** The agent's private-mode signal. */
  incognito: boolean;
  /** Whether the visit presented a device token at all (a new one, or one not believed). */
  hasToken: boolean;
  /** Whether it came through the first-party proxy: a device that kept its cookie would have presented it. */
  proxied: boolean;
  /** Distinct visitors seen on the visit's prefix and AS. */
  prefixCrowd: number;
  asnCrowd: number;
  account: AccountCounts;
  group: GroupCounts;
  /** Visitors holding the visit's exact key (0: none, or no exact key). */
  holders: number;
  /** Hash of the customer's linkedId sent with the visit, when the project takes it as evidence. */
  linked: string | null;
}

const DAY = 86_400_000;

/**
 * The model's constants. Rates are per visit unless stated; each is a
 * plausible real-world value, and the benchmark's worlds halve and double
 * the corresponding behaviour to check the decisions do not hinge on it.
 */
export const MODEL = {
  /** Private windows per visit, and how often the agent recognises one. */
  privateRate: 0.05,
  privateDetected: 0.9,
  /** Non-private visits wrongly flagged private. */
  privateFalse: 0.02,
  /** Storage cleared (user, browser cleanup) per visit, growing with the time away. */
  clearRate: 0.02,
  clearPerDay: 0.001,
  /** WebKit's ITP: script-written storage deleted after 7 days without a visit. */
  itpDays: 7,
  itpLoss: 0.8,
  /** Smallest anonymity set: even a singleton key could belong to a device not seen yet. */
  minAnonymity: 0.05,
  /** Growth of the smallest anonymity set as fewer signals are compared (e^6 ≈ 400 at none). */
  sparseSlope: 6,
  /**
   * Good–Turing smoothing: before an account has seen many keys, a
   * singleton's r* leans on the account's own ratio, and that on 1 (a key
   * shared about once), by these many pseudo-keys.
   */
  groupPseudoKeys: 10,
  accountPseudoKeys: 20,
  /**
   * What a key seen once stands for before the account has data: desktops'
   * fingerprints (fonts, GPU, settings) are mostly their own, phones of one
   * model and locale mostly share theirs.
   */
  desktopSingleton: 0.2,
  mobileSingleton: 1,
  /** Prior visits (and days) added to a visitor's rate estimate. */
  rateDays: 14,
  /** Shortest account age used for T, so a young account does not overrate its visitors. */
  minAgeDays: 14,
  /** Pseudo-devices pulling the network share among look-alikes towards the share among all visitors. */
  lookalikePseudo: 1,
  /**
   * Pseudo-visitors of a young account, and the share of a site's devices one
   * prefix (a few households, an office) and one AS (a large ISP or carrier)
   * hold before the account has seen enough: a young account's handful of
   * visitors says little about how many devices live behind one prefix.
   */
  pseudoVisitors: 1000,
  prefixPrior: 0.0001,
  asnPrior: 0.02,
  /**
   * A visit carrying a linkedId v was seen with, when it is not v: a device
   * never seen that looks like v (a candidate at all) and is signed in to the
   * same customer account. The share of a look-alike's signed-in visits that
   * are v's account's: small for a desktop (a user's other computer has its
   * own fonts, GPU and screen), larger for a phone (a family's phones of one
   * model share an account). P(linkedId | v) / P(linkedId | new) is its inverse.
   */
  linkedSiblingDesktop: 0.01,
  linkedSiblingMobile: 0.5,
} as const;

/** Good–Turing adjusted count r* for a key held by r visitors of a group, smoothed towards the account's. */
export function anonymity(r: number, g: GroupCounts, a: GroupCounts, mobile = false): number {
  const prior = mobile ? MODEL.mobileSingleton : MODEL.desktopSingleton;
  const accountRatio = (2 * a.n2 + MODEL.accountPseudoKeys * prior) / (a.n1 + MODEL.accountPseudoKeys);
  const singleton = (2 * g.n2 + MODEL.groupPseudoKeys * accountRatio) / (g.n1 + MODEL.groupPseudoKeys);
  if (r <= 1) return Math.max(MODEL.minAnonymity, singleton);
  return Math.max(r * 0.75, (r + 1) * (r === 2 ? (g.n3 + 1) / (g.n2 + 1) : 1));
}

/**
 * The tokens a candidate's storage kept: those of private windows died with
 * them, and once a proxied visit came without a cookie the service had set,
 * no cookie set and never presented counts (the browser does not keep them).
 */
type WithTokens = { tokens: readonly Pick<TokenUse, 'ephemeral' | 'cookie' | 'issued' | 'unreturned'>[] };
const kept = (v: WithTokens) => {
  const refuses = v.tokens.some((t) => t.unreturned);
  return v.tokens.filter((t) => !t.ephemeral && !(refuses && t.issued));
};
const keptTokens = (v: WithTokens) => kept(v).length;
/** Whether a candidate kept the first-party proxy's device cookie, which WebKit's ITP does not delete. */
export const keepsCookie = (v: WithTokens) => kept(v).some((t) => t.cookie);

/** log P(this visit's storage state | v returning) − log P(… | new device). */
export function storageEvidence(v: CandidateFacts & WithTokens, visit: VisitFacts): number {
  // A visitor that never kept a token (storage blocked, a custom client) returns without one as a matter of course;
  // one seen only in private windows had no storage to keep, and returns with a new token or none alike.
  if (!keptTokens(v) && (v.tokens.length > 0 || !visit.hasToken)) return 0;
  const days = Math.max(0, visit.now - v.lastSeenAt) / DAY;
  // ITP explains a lost script token, never a lost device cookie: a device that kept one is missing it only once cleared.
  const itp = v.webkit && days > MODEL.itpDays && !(visit.proxied && keepsCookie(v));
  const loss = Math.min(0.95, MODEL.clearRate + MODEL.clearPerDay * days + (itp ? MODEL.itpLoss : 0));
  const { privateRate: p, privateDetected: d, privateFalse: f } = MODEL;
  // A private window is as likely for a returning device as for a new one.
  const returning = visit.incognito ? p * d + loss * f : p * (1 - d) + loss * (1 - f);
  const fresh = visit.incognito ? p * d + (1 - p) * f : p * (1 - d) + (1 - p) * (1 - f);
  return Math.log(returning / fresh);
}

/**
 * log P(network | v) − log P(network | a new device like this one), and
 * which case it is: v's own prefix, v's AS only, a network new to v, or none
 * (an anonymizer). The new device's chance of being on this prefix (AS) is
 * the share of the visit's look-alikes seen there, pulled towards the share
 * of all visitors: an office of identical laptops, or identical phones at
 * home, make the shared prefix expected of a new look-alike, and then it is
 * no evidence for v.
 */
export function networkParts(
  v: CandidateFacts,
  visit: VisitFacts,
  lookalikes: readonly CandidateFacts[],
): { kind: 'prefix' | 'asn' | 'moved' | 'none'; evidence: number } {
  const { prefix, asn, kind } = visit.network;
  if (kind === 'anonymizer' || prefix === null) return { kind: 'none', evidence: 0 };
  const n = visit.account.visitors;
  const a = MODEL.lookalikePseudo;
  // The share of visitors seen on the network, as a new device's chance to be there: a young account
  // has seen too few to tell, so pseudo-visitors pull it towards what one prefix (a household or office)
  // or one AS (a large ISP, a carrier) usually holds.
  const { pseudoVisitors: k, prefixPrior, asnPrior } = MODEL;
  const prefixShare = (visit.prefixCrowd + k * prefixPrior) / (n + k);
  const asnShare = (visit.asnCrowd + k * asnPrior) / (n + k);
  const share = (on: number, base: number) => (on + a * base) / (lookalikes.length + a);
  const visits = v.visitCount;
  // How often v shows up on a prefix, and on an AS, it had not used before (an undone merge can leave the counts approximate).
  const rate = (novel: number) => Math.min(0.98, (novel + 1) / (visits + 2));
  const mobility = rate(v.novelPrefixes);
  const asnMobility = rate(v.novelAsns);
  const seen = v.prefixes.find((x) => x.p === prefix);
  if (seen) {
    const usage = Math.min(1, (seen.n + 0.5) / (visits + 1));
    const pV = usage * (1 - mobility);
    return { kind: 'prefix', evidence: Math.log(pV / share(lookalikes.filter((u) => u.prefixes.some((x) => x.p === prefix)).length, prefixShare)) };
  }
  // v moved: within an AS it uses (a carrier's pool, a renumbered line), as
  // often as it uses that AS against the AS's share; or anywhere, like any
  // device. How likely the prefix itself is cancels out.
  const sameAs = asn === null ? undefined : v.asns.find((x) => x.a === asn);
  if (!sameAs) return { kind: 'moved', evidence: Math.log(mobility * asnMobility) };
  const usage = Math.min(1, (sameAs.n + 0.5) / (visits + 1));
  const withinAs = ((1 - asnMobility) * usage) / share(lookalikes.filter((u) => u.asns.some((x) => x.a === asn)).length, asnShare);
  return { kind: 'asn', evidence: Math.log(mobility * (withinAs + asnMobility)) };
}

/**
 * log P(the visit's linkedId | v) − log P(… | a device never seen), when v was
 * seen with it: signed in to the same account as v, a look-alike is v unless
 * the account has another device like it (MODEL.linkedSibling*). A look-alike
 * of v also seen with it (a shared account's identical phones) leaves the
 * linkedId nothing to tell apart: 0, and the fingerprint and network decide
 * as without it. Never more than a factor on a candidate the fingerprint
 * already found (similarity ≥ MIN_SCORE): a linkedId alone joins nothing.
 */
export function linkedEvidence(v: CandidateFacts, visit: VisitFacts, lookalikes: readonly CandidateFacts[], mobile: boolean): number {
  const L = visit.linked;
  if (L === null || !v.linked?.includes(L)) return 0;
  // A look-alike seen with it, or one of v's household (a prefix in common) never seen signed in, may be the account's too.
  const housemate = (u: CandidateFacts) => !u.linked?.length && u.prefixes.some((x) => v.prefixes.some((y) => y.p === x.p));
  if (lookalikes.some((u) => u.linked?.includes(L) || housemate(u))) return 0;
  return -Math.log(mobile ? MODEL.linkedSiblingMobile : MODEL.linkedSiblingDesktop);
}

/** log of how often v visits over the account's age: the visit's prior chance of being v's against a new device's. */
export function priorEvidence(v: CandidateFacts, visit: VisitFacts): number {
  const rate = (v.visitCount + 1) / (Math.max(0, visit.now - v.firstSeenAt) / DAY + MODEL.rateDays);
  const age = Math.max(MODEL.minAgeDays, (visit.now - visit.account.since) / DAY);
  return Math.log(rate * age);
}

export interface Features {
  /** log(v's visits over the account's age): how likely the visit is v's at all. */
  prior: number;
  /** −log(anonymity set): the Good–Turing estimate, larger the fewer signals were compared. */
  rarity: number;
  /** Share of the stable fingerprint not compared (failed or farbled signals). */
  sparse: number;
  /** The storage evidence: private window, cleared storage, ITP, time away. */
  storage: number;
  /** The agent reported a private window. */
  incognito: number;
  /** v is a WebKit browser away for more than ITP's 7 days: its storage is expected gone. */
  itpDue: number;
  /** log(1 + days since v was last seen). */
  away: number;
  /** The exact keys agree. */
  exact: number;
  /** Changed components by group (at most 3 each). */
  changedRender: number;
  changedScreen: number;
  changedVolatile: number;
  changedTimezone: number;
  changedFonts: number;
  changedLanguage: number;
  changedLanguageAdded: number;
  changedHardware: number;
  changedVersion: number;
  changedOther: number;
  /** v used the visit's prefix, and the network evidence for it (log-ratio). */
  samePrefix: number;
  prefixEvidence: number;
  /** v used only the visit's AS, and the evidence for it. */
  sameAsn: number;
  asnEvidence: number;
  /** Neither: log of how often v moves to a network it had not used. */
  moved: number;
  /** The address is an anonymizer (VPN, relay, hosting): it says nothing. */
  anonymizer: number;
  /** log(1 + look-alikes that used the visit's prefix, its AS): they fit the address as well as v. */
  rivalsOnPrefix: number;
  rivalsOnAsn: number;
  /** log(1 + visitors of the account seen on the visit's prefix). */
  prefixCrowd: number;
  /** log(1 + other candidates at least about as similar). */
  crowd: number;
  /** The visit's exact key is held by v alone. */
  soleHolder: number;
  /** v used the visit's prefix and no look-alike did. */
  soleOnPrefix: number;
  /** v used only the visit's AS and no look-alike did. */
  soleOnAsn: number;
  /** A network new to v, and v holds the visit's exact key alone: on a desktop, on a phone (phones are far more alike). */
  movedSoleDesktop: number;
  movedSoleMobile: number;
  /** A touch-first mobile device: lower fingerprint entropy. */
  mobile: number;
  /** v has kept a device token before, outside a private window (storage works on it). */
  keptToken: number;
  /** The linkedId evidence (linkedEvidence): v was seen with the visit's linkedId and no look-alike was. */
  linked: number;
}

export type FeatureName = keyof Features;
export const FEATURES = [
  'prior',
  'rarity',
  'sparse',
  'storage',
  'incognito',
  'itpDue',
  'away',
  'exact',
  'changedRender',
  'changedScreen',
  'changedVolatile',
  'changedTimezone',
  'changedFonts',
  'changedLanguage',
  'changedLanguageAdded',
  'changedHardware',
  'changedVersion',
  'changedOther',
  'samePrefix',
  'prefixEvidence',
  'sameAsn',
  'asnEvidence',
  'moved',
  'anonymizer',
  'rivalsOnPrefix',
  'rivalsOnAsn',
  'prefixCrowd',
  'crowd',
  'soleHolder',
  'soleOnPrefix',
  'soleOnAsn',
  'movedSoleDesktop',
  'movedSoleMobile',
  'mobile',
  'keptToken',
  'linked',
] as const satisfies readonly FeatureName[];

/** Weights of the features in the log-odds against a new device. */
export type Weights = Record<FeatureName | 'bias', number>;

/** The weights bench/accuracy/fit.ts fitted (weights.ts, generated plain data), checked to name every feature. */
export const FITTED_WEIGHTS = WEIGHTS satisfies Weights;

/** The Bayesian model: each log-ratio weighs 1, the rest 0 (fit.ts starts here and stays near it). */
export const DEFAULT_WEIGHTS: Weights = {
  ...(Object.fromEntries(FEATURES.map((k) => [k, 0])) as Record<FeatureName, number>),
  bias: Math.log(0.85),
  prior: 1,
  rarity: 1,
  storage: 1,
  prefixEvidence: 1,
  asnEvidence: 1,
  moved: 1,
  linked: 1,
  changedRender: -1,
  changedScreen: -2,
  changedVolatile: -0.5,
  changedTimezone: -4,
  changedFonts: -3,
  changedLanguage: -3,
  changedLanguageAdded: -1,
  changedHardware: -3,
  changedVersion: -0.5,
  changedOther: -3,
};

export interface Scored {
  visitorId: string;
  logOdds: number;
  features: Features;
}

export interface FingerprintMatch {
  score: number;
  overlap: number;
  exact: boolean;
  changed: Record<ChangeGroup, number>;
}

export function features(
  v: CandidateFacts & WithTokens,
  visit: VisitFacts,
  fp: FingerprintMatch & { mobile: boolean },
  lookalikes: readonly CandidateFacts[],
): Features {
  // Fewer signals compared, more devices alike: the set grows as the compared share of the fingerprint shrinks.
  const a = Math.max(
    anonymity(fp.exact ? visit.holders : 0, visit.group, visit.account, fp.mobile),
    MODEL.minAnonymity * Math.exp(MODEL.sparseSlope * (1 - fp.overlap)),
  );
  const { prefix, asn } = visit.network;
  const net = networkParts(v, visit, lookalikes);
  const log1p = (k: number) => Math.log(1 + k);
  const days = Math.max(0, visit.now - v.lastSeenAt) / DAY;
  const c = (k: number) => Math.min(3, k);
  const rivalsOnPrefix = net.kind === 'none' ? 0 : lookalikes.filter((u) => u.prefixes.some((x) => x.p === prefix)).length;
  const rivalsOnAsn = net.kind === 'none' || asn === null ? 0 : lookalikes.filter((u) => u.asns.some((x) => x.a === asn)).length;
  const sole = fp.exact && visit.holders <= 1;
  return {
    prior: priorEvidence(v, visit),
    rarity: -Math.log(a),
    sparse: 1 - fp.overlap,
    storage: storageEvidence(v, visit),
    incognito: visit.incognito ? 1 : 0,
    itpDue: v.webkit && days > MODEL.itpDays ? 1 : 0,
    away: log1p(days),
    exact: fp.exact ? 1 : 0,
    changedRender: c(fp.changed.render),
    changedScreen: c(fp.changed.screen),
    changedVolatile: c(fp.changed.volatile),
    changedTimezone: c(fp.changed.timezone),
    changedFonts: c(fp.changed.fonts),
    changedLanguage: c(fp.changed.language),
    changedLanguageAdded: c(fp.changed.languageAdded),
    changedHardware: c(fp.changed.hardware),
    changedVersion: c(fp.changed.version),
    changedOther: c(fp.changed.other),
    samePrefix: net.kind === 'prefix' ? 1 : 0,
    prefixEvidence: net.kind === 'prefix' ? net.evidence : 0,
    sameAsn: net.kind === 'asn' ? 1 : 0,
    asnEvidence: net.kind === 'asn' ? net.evidence : 0,
    moved: net.kind === 'moved' ? net.evidence : 0,
    anonymizer: net.kind === 'none' ? 1 : 0,
    rivalsOnPrefix: log1p(rivalsOnPrefix),
    rivalsOnAsn: log1p(rivalsOnAsn),
    prefixCrowd: net.kind === 'none' ? 0 : log1p(visit.prefixCrowd),
    crowd: log1p(lookalikes.length),
    soleHolder: sole ? 1 : 0,
    soleOnPrefix: net.kind === 'prefix' && rivalsOnPrefix === 0 ? 1 : 0,
    soleOnAsn: net.kind === 'asn' && rivalsOnAsn === 0 ? 1 : 0,
    movedSoleDesktop: net.kind === 'moved' && sole && !fp.mobile ? 1 : 0,
    movedSoleMobile: net.kind === 'moved' && sole && fp.mobile ? 1 : 0,
    mobile: fp.mobile ? 1 : 0,
    keptToken: keptTokens(v) ? 1 : 0,
    linked: linkedEvidence(v, visit, lookalikes, fp.mobile),
  };
}

/** The network features of features(), weighted as the decision weighs them: v's network evidence on the log-odds scale. */
const NETWORK_FEATURES = [
  'samePrefix',
  'prefixEvidence',
  'sameAsn',
  'asnEvidence',
  'moved',
  'anonymizer',
  'rivalsOnPrefix',
  'rivalsOnAsn',
  'soleOnPrefix',
  'soleOnAsn',
] as const satisfies readonly FeatureName[];
export function networkScore(v: CandidateFacts & WithTokens, visit: VisitFacts, lookalikes: readonly CandidateFacts[], w: Weights = FITTED_WEIGHTS): number {
  const none = { render: 0, screen: 0, volatile: 0, timezone: 0, fonts: 0, language: 0, languageAdded: 0, hardware: 0, version: 0, other: 0 };
  const f = features(v, visit, { score: 1, overlap: 1, exact: false, changed: none, mobile: false }, lookalikes);
  return NETWORK_FEATURES.reduce((t, k) => t + w[k] * f[k], 0);
}

export function logOddsOf(f: Features, w: Weights = FITTED_WEIGHTS): number {
  let s = w.bias;
  for (const k of FEATURES) s += w[k] * f[k];
  return s;
}

/**
 * P(the best candidate) and P(new device), from log-odds against a new
 * device. `residual` is the log-odds mass of look-alikes not listed (null:
 * none): they take their share without being candidates.
 */
export function posterior(scored: readonly { logOdds: number }[], residual: number | null = null): { best: number; pBest: number; pNew: number } {
  if (!scored.length && residual === null) return { best: -1, pBest: 0, pNew: 1 };
  const max = Math.max(0, residual ?? 0, ...scored.map((s) => s.logOdds));
  const rest = residual === null ? 0 : Math.exp(residual - max);
  const total = Math.exp(-max) + rest + scored.reduce((t, s) => t + Math.exp(s.logOdds - max), 0);
  if (!scored.length) return { best: -1, pBest: 0, pNew: Math.exp(-max) / total };
  let best = 0;
  scored.forEach((s, i) => {
    if (s.logOdds > scored[best]!.logOdds) best = i;
  });
  return { best, pBest: Math.exp(scored[best]!.logOdds - max) / total, pNew: Math.exp(-max) / total };
}

export type { Components };
