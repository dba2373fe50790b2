// The evidence model's terms (server/identification/evidence.ts), each on
// its own: every rule the linker's decisions rest on has a case that fails
// when the rule is removed or inverted.
import { describe, expect, it } from 'vitest';
import {
  anonymity,
  features,
  linkedEvidence,
  logOddsOf,
  MODEL,
  networkParts,
  posterior,
  priorEvidence,
  storageEvidence,
  type CandidateFacts,
  type VisitFacts,
  type Weights,
} from '../../../server/identification/evidence.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 15);

type Tokens = { tokens: { ephemeral?: true }[] };
const visitor = (o: Partial<CandidateFacts & Tokens> = {}): CandidateFacts & Tokens => ({
  visitCount: 4,
  firstSeenAt: NOW - 30 * DAY,
  lastSeenAt: NOW - DAY,
  prefixes: [{ p: '81.2.69.0/24', n: 3, last: NOW - DAY }],
  asns: [{ a: 2856, n: 4, last: NOW - DAY }],
  novelPrefixes: 1,
  novelAsns: 1,
  webkit: false,
  tokens: [{}],
  ...o,
});

const visit = (o: Partial<VisitFacts> = {}): VisitFacts => ({
  now: NOW,
  network: { prefix: '81.2.69.0/24', asn: 2856, kind: 'fixed' },
  incognito: false,
  hasToken: true,
  linked: null,
  prefixCrowd: 1,
  asnCrowd: 500,
  account: { visitors: 20_000, since: NOW - 200 * DAY, n1: 5_000, n2: 500, n3: 100 },
  group: { n1: 50, n2: 5, n3: 1 },
  holders: 1,
  ...o,
});

describe('anonymity (Good–Turing)', () => {
  const none = { n1: 0, n2: 0, n3: 0 };
  it('makes a singleton key of a group of unique keys stand for far less than one device', () => {
    expect(anonymity(1, { n1: 1000, n2: 10, n3: 0 }, none)).toBeLessThan(0.1);
  });
  it('makes a singleton of a group where keys are shared stand for about one device or more', () => {
    expect(anonymity(1, { n1: 100, n2: 80, n3: 10 }, none)).toBeGreaterThan(1);
  });
  it('grows with the number of holders and never claims fewer devices than seen (less a margin)', () => {
    const g = { n1: 100, n2: 20, n3: 5 };
    expect(anonymity(2, g, none)).toBeGreaterThanOrEqual(1.5);
    expect(anonymity(5, g, none)).toBe(6);
    expect(anonymity(3, g, none)).toBeLessThan(anonymity(5, g, none));
  });
  it('leans on the account before a group has data, and before the account has on what a key of its kind stands for', () => {
    // With no data a desktop key (fonts, GPU, settings) is mostly its own, a phone's mostly shared.
    expect(anonymity(1, none, none)).toBeCloseTo(MODEL.desktopSingleton, 5);
    expect(anonymity(1, none, none, true)).toBeCloseTo(MODEL.mobileSingleton, 5);
    // An account of unique keys makes a singleton stand for less, one of shared keys for more.
    expect(anonymity(1, none, { n1: 10_000, n2: 0, n3: 0 }, true)).toBeLessThan(MODEL.mobileSingleton);
    expect(anonymity(1, none, { n1: 100, n2: 1_000, n3: 0 })).toBeGreaterThan(MODEL.desktopSingleton);
  });
  it('never goes below the smallest set', () => {
    expect(anonymity(0, { n1: 1e9, n2: 0, n3: 0 }, { n1: 1e9, n2: 0, n3: 0 })).toBe(MODEL.minAnonymity);
  });
});

describe('storage evidence', () => {
  it('is neutral for a visitor that never kept a token returning without one', () => {
    expect(storageEvidence(visitor({ tokens: [] }), visit({ hasToken: false }))).toBe(0);
  });
  it('counts against a device that kept its token and shows up without it, less so the longer it was away', () => {
    const recent = storageEvidence(visitor({ lastSeenAt: NOW - 60_000 }), visit());
    const away = storageEvidence(visitor({ lastSeenAt: NOW - 200 * DAY }), visit());
    expect(recent).toBeLessThan(-3);
    expect(away).toBeGreaterThan(recent);
  });
  it('expects WebKit to have lost its storage after seven days away, not before', () => {
    const before = storageEvidence(visitor({ webkit: true, lastSeenAt: NOW - 6 * DAY }), visit());
    const after = storageEvidence(visitor({ webkit: true, lastSeenAt: NOW - 8 * DAY }), visit());
    expect(after).toBeGreaterThan(-0.5);
    expect(before).toBeLessThan(-3);
    expect(storageEvidence(visitor({ lastSeenAt: NOW - 8 * DAY }), visit())).toBeLessThan(-3);
  });
  it('is neutral for a visitor seen only in private windows, whose storage died with them, returning with a new token or none', () => {
    const privateOnly = visitor({ lastSeenAt: NOW - 60_000, tokens: [{ ephemeral: true }, { ephemeral: true }] });
    expect(storageEvidence(privateOnly, visit())).toBe(0);
    expect(storageEvidence(privateOnly, visit({ hasToken: false }))).toBe(0);
    // One token kept outside a private window, and losing it counts again.
    expect(storageEvidence({ ...privateOnly, tokens: [{ ephemeral: true }, {}] }, visit())).toBeLessThan(-3);
  });
  it('finds a private window about as likely for a returning device as for a new one', () => {
    expect(Math.abs(storageEvidence(visitor({ lastSeenAt: NOW - 60_000 }), visit({ incognito: true })))).toBeLessThan(0.5);
  });
});

describe('network evidence', () => {
  it('is strong for a prefix the visitor uses that no one else does, and weak when a crowd shares it', () => {
    const home = networkParts(visitor(), visit(), []);
    expect(home.kind).toBe('prefix');
    expect(home.evidence).toBeGreaterThan(5);
    expect(networkParts(visitor(), visit({ prefixCrowd: 15_000 }), []).evidence).toBeLessThan(1);
  });
  it('is no evidence for the visitor when its look-alikes use the prefix too', () => {
    const twins = [visitor(), visitor(), visitor()];
    expect(networkParts(visitor(), visit(), twins).evidence).toBeLessThan(networkParts(visitor(), visit(), []).evidence - 1);
  });
  it("is weaker for the visitor's AS alone than for its prefix, and weaker for a crowded AS", () => {
    const v = visit({ network: { prefix: '81.2.70.0/24', asn: 2856, kind: 'fixed' } });
    const asn = networkParts(visitor(), v, []);
    expect(asn.kind).toBe('asn');
    expect(asn.evidence).toBeLessThan(networkParts(visitor(), visit(), []).evidence);
    expect(networkParts(visitor(), { ...v, asnCrowd: 19_000 }, []).evidence).toBeLessThan(asn.evidence);
  });
  it('costs what the visitor moves: a phone less than a desktop', () => {
    const away = visit({ network: { prefix: '203.0.113.0/24', asn: 64500, kind: 'fixed' } });
    const desktop = networkParts(visitor({ visitCount: 20, novelPrefixes: 1, novelAsns: 1 }), away, []);
    const phone = networkParts(visitor({ visitCount: 20, novelPrefixes: 15, novelAsns: 3 }), away, []);
    expect(desktop.kind).toBe('moved');
    expect(desktop.evidence).toBeLessThan(phone.evidence);
    expect(phone.evidence).toBeLessThan(0);
  });
  it('says nothing on an anonymizer or an unknown address', () => {
    expect(networkParts(visitor(), visit({ network: { prefix: '81.2.69.0/24', asn: 9009, kind: 'anonymizer' } }), [])).toEqual({ kind: 'none', evidence: 0 });
    expect(networkParts(visitor(), visit({ network: { prefix: null, asn: null, kind: 'fixed' } }), [])).toEqual({ kind: 'none', evidence: 0 });
  });
  it("trusts a young account's crowd counts less: one shared visitor is not a crowd", () => {
    const young = visit({ account: { visitors: 3, since: NOW - DAY, n1: 3, n2: 0, n3: 0 }, prefixCrowd: 1 });
    expect(networkParts(visitor(), young, []).evidence).toBeGreaterThan(4);
  });
});

describe('linkedId evidence', () => {
  const L = 'hash-of-ada';
  const signedIn = visit({ linked: L });
  const NO_CHANGE = { render: 0, screen: 0, volatile: 0, timezone: 0, fonts: 0, language: 0, languageAdded: 0, hardware: 0, version: 0, other: 0 };
  it("counts for a visitor seen with the visit's linkedId: log(1/q), far more on a desktop than on a phone", () => {
    const v = visitor({ linked: ['other', L] });
    expect(linkedEvidence(v, signedIn, [], false)).toBeCloseTo(-Math.log(MODEL.linkedSiblingDesktop));
    expect(linkedEvidence(v, signedIn, [], true)).toBeCloseTo(-Math.log(MODEL.linkedSiblingMobile));
    expect(MODEL.linkedSiblingDesktop).toBeLessThan(MODEL.linkedSiblingMobile);
    expect(features(v, signedIn, { score: 1, overlap: 1, exact: true, changed: NO_CHANGE, mobile: false }, []).linked).toBeGreaterThan(4);
  });
  it('is nothing without a linkedId, or for a visitor never seen with this one', () => {
    expect(linkedEvidence(visitor({ linked: [L] }), visit(), [], false)).toBe(0);
    expect(linkedEvidence(visitor({ linked: ['other'] }), signedIn, [], false)).toBe(0);
    expect(linkedEvidence(visitor(), signedIn, [], false)).toBe(0);
  });
  it("tells nothing apart when a look-alike was seen with it too (a shared account's identical devices)", () => {
    const rival = visitor({ prefixes: [{ p: '2.125.160.0/24', n: 2, last: NOW - DAY }], linked: [L] });
    expect(linkedEvidence(visitor({ linked: [L] }), signedIn, [rival], true)).toBe(0);
  });
  it("tells nothing apart when a look-alike of the visitor's household never signed in, but a look-alike elsewhere or another account's does not matter", () => {
    const v = visitor({ linked: [L] });
    const housemate = visitor({ linked: [] });
    const elsewhere = visitor({ prefixes: [{ p: '2.125.160.0/24', n: 2, last: NOW - DAY }], linked: [] });
    const neighbour = visitor({ linked: ['someone else'] });
    expect(linkedEvidence(v, signedIn, [housemate], true)).toBe(0);
    expect(linkedEvidence(v, signedIn, [elsewhere, neighbour], true)).toBeCloseTo(-Math.log(MODEL.linkedSiblingMobile));
  });
});

describe('prior', () => {
  it('grows with how often the visitor comes and with the account age', () => {
    const v = visit();
    expect(priorEvidence(visitor({ visitCount: 30 }), v)).toBeGreaterThan(priorEvidence(visitor({ visitCount: 2 }), v));
    expect(priorEvidence(visitor(), visit({ account: { ...v.account, since: NOW - 400 * DAY } }))).toBeGreaterThan(priorEvidence(visitor(), v));
  });
});

describe('features and score', () => {
  const fp = {
    score: 1,
    overlap: 1,
    exact: true,
    mobile: false,
    changed: { render: 0, screen: 0, volatile: 0, timezone: 0, fonts: 0, language: 0, languageAdded: 0, hardware: 0, version: 0, other: 0 },
  };
  it('names the network case and the rivals on it', () => {
    const rival = visitor();
    const f = features(visitor(), visit(), fp, [rival]);
    expect(f).toMatchObject({
      samePrefix: 1,
      sameAsn: 0,
      anonymizer: 0,
      rivalsOnPrefix: Math.log(2),
      soleOnPrefix: 0,
      exact: 1,
      soleHolder: 1,
      keptToken: 1,
      mobile: 0,
    });
    const alone = features(visitor(), visit(), fp, []);
    expect(alone.soleOnPrefix).toBe(1);
    expect(alone.crowd).toBe(0);
    // Tokens of private windows were never kept.
    expect(features(visitor({ tokens: [{ ephemeral: true }] }), visit(), fp, []).keptToken).toBe(0);
  });
  it('counts changes by kind and makes fewer compared signals a larger anonymity set', () => {
    const f = features(visitor(), visit(), { ...fp, exact: false, score: 0.9, overlap: 0.3, changed: { ...fp.changed, timezone: 1, render: 5 } }, []);
    expect(f.changedTimezone).toBe(1);
    expect(f.changedRender).toBe(3);
    expect(f.rarity).toBeLessThan(features(visitor(), visit(), fp, []).rarity);
  });
  it('adds the weighted features to the bias', () => {
    const f = features(visitor(), visit(), fp, []);
    const w = Object.fromEntries(Object.keys(f).map((k) => [k, 0])) as unknown as Weights;
    expect(logOddsOf(f, { ...w, bias: 0.5 })).toBe(0.5);
    expect(logOddsOf(f, { ...w, bias: 0, exact: 2 })).toBe(2);
  });
  it('shares the probability between the candidates and a new device', () => {
    expect(posterior([])).toEqual({ best: -1, pBest: 0, pNew: 1 });
    const one = posterior([{ logOdds: 0 }]);
    expect(one.pBest).toBeCloseTo(0.5);
    const two = posterior([{ logOdds: Math.log(3) }, { logOdds: Math.log(6) }]);
    expect(two.best).toBe(1);
    expect(two.pBest).toBeCloseTo(0.6);
    expect(two.pNew).toBeCloseTo(0.1);
  });
});
