// The evidence model's terms (server/identification/evidence.ts), each on
// its own: every rule the linker's decisions rest on has a case that fails
// when the rule is removed or inverted.
import { describe, expect, it } from 'vitest';
import {
  anonymity,
  DEFAULT_WEIGHTS,
  features,
  linkedEvidence,
  logOddsOf,
  MODEL,
  networkParts,
  networkScore,
  posterior,
  priorEvidence,
  storageEvidence,
  type CandidateFacts,
  type VisitFacts,
  type Weights,
} from '../../../server/identification/evidence.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 15);

type Tokens = { tokens: { ephemeral?: true; cookie?: true; issued?: true; unreturned?: true }[] };
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
  proxied: false,
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
  it('makes a key held by two visitors stand for more devices where keys held by three are common (r* = 3·N3/N2)', () => {
    expect(anonymity(2, { n1: 100, n2: 1, n3: 5 }, none)).toBe(9);
    // Smoothed: a singleton leans on the account's ratio (2·N2 + 20·0.2) / (N1 + 20) = 0.2 by 10 pseudo-keys.
    expect(anonymity(1, { n1: 40, n2: 10, n3: 0 }, { n1: 1000, n2: 100, n3: 0 })).toBeCloseTo((20 + 10 * 0.2) / 50, 12);
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
  it('is neutral for a visitor whose browser did not return the cookies it was set, and counts a cookie not yet put to the test as kept', () => {
    // Storage blocked through the proxy: every visit was set a cookie, and the next came without it.
    const refusing = visitor({
      lastSeenAt: NOW - 60_000,
      tokens: [
        { cookie: true, issued: true },
        { cookie: true, issued: true, unreturned: true },
      ],
    });
    expect(storageEvidence(refusing, visit({ hasToken: false, proxied: true }))).toBe(0);
    // Seen once: its cookie was set and no visit has come since; most browsers keep theirs, and losing it counts.
    const once = visitor({ lastSeenAt: NOW - 60_000, tokens: [{ cookie: true, issued: true }] });
    expect(storageEvidence(once, visit({ hasToken: false, proxied: true }))).toBeLessThan(-3);
    // A cookie it presented is kept, whatever else was not returned.
    const kept = visitor({ lastSeenAt: NOW - 60_000, tokens: [{ cookie: true }, { cookie: true, issued: true, unreturned: true }] });
    expect(storageEvidence(kept, visit({ hasToken: false, proxied: true }))).toBeLessThan(-3);
  });
  it('finds a private window about as likely for a returning device as for a new one', () => {
    expect(Math.abs(storageEvidence(visitor({ lastSeenAt: NOW - 60_000 }), visit({ incognito: true })))).toBeLessThan(0.5);
  });
  it('weighs storage states by their chances for a returning device and a new one', () => {
    // A minute away, storage lost with 2 % chance: (5 %·10 % missed private + 2 %·98 %) / (5 %·10 % + 95 %·98 %).
    const recent = visitor({ lastSeenAt: NOW - 60_000 });
    expect(storageEvidence(recent, visit())).toBeCloseTo(Math.log((0.005 + 0.02 * 0.98) / (0.005 + 0.95 * 0.98)), 4);
    // Flagged private: (5 %·90 % + 2 %·2 % flagged wrongly) / (5 %·90 % + 95 %·2 %).
    expect(storageEvidence(recent, visit({ incognito: true }))).toBeCloseTo(Math.log((0.045 + 0.02 * 0.02) / (0.045 + 0.95 * 0.02)), 4);
    // 100 days away: 2 % + 0.1 % a day.
    const away = visitor({ lastSeenAt: NOW - 100 * DAY });
    expect(storageEvidence(away, visit())).toBeCloseTo(Math.log((0.005 + 0.12 * 0.98) / 0.936), 4);
    expect(storageEvidence(away, visit({ incognito: true }))).toBeCloseTo(Math.log((0.045 + 0.12 * 0.02) / 0.064), 4);
  });
  it('finds nothing in the storage state of a WebKit device away for years: its storage is as surely gone as a new device has none', () => {
    expect(storageEvidence(visitor({ webkit: true, lastSeenAt: NOW - 1000 * DAY }), visit())).toBeCloseTo(0, 12);
  });
  it('does not excuse a missing device cookie by ITP: through the proxy, a WebKit device that kept one lost it only if cleared', () => {
    const safari = visitor({ webkit: true, lastSeenAt: NOW - 8 * DAY, tokens: [{}, { cookie: true }] });
    // 8 days away: 2 % + 0.8 % cleared, as for any other browser, instead of ITP's 80 % on top.
    expect(storageEvidence(safari, visit({ proxied: true }))).toBeCloseTo(Math.log((0.005 + 0.028 * 0.98) / (0.005 + 0.95 * 0.98)), 4);
    expect(storageEvidence(safari, visit({ proxied: true }))).toBeCloseTo(storageEvidence({ ...safari, webkit: false }, visit({ proxied: true })), 12);
    // Without the proxy the cookie could not be presented, and a cookie seen only in a private window died with it.
    expect(storageEvidence(safari, visit())).toBeGreaterThan(-0.5);
    expect(storageEvidence({ ...safari, tokens: [{}, { cookie: true, ephemeral: true }] }, visit({ proxied: true }))).toBeGreaterThan(-0.5);
    expect(storageEvidence({ ...safari, tokens: [{}] }, visit({ proxied: true }))).toBeGreaterThan(-0.5);
  });
  it('expects a WebKit device back exactly a week later to still have its storage', () => {
    expect(storageEvidence(visitor({ webkit: true, lastSeenAt: NOW - 7 * DAY }), visit())).toBeLessThan(-3);
  });
  it('counts against a visitor that never showed a token when its device now presents one', () => {
    expect(storageEvidence(visitor({ tokens: [], lastSeenAt: NOW - 60_000 }), visit({ hasToken: true }))).toBeLessThan(-3);
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
  it('weighs a home prefix, an AS and a move by how the visitor uses its networks against how many visitors share them', () => {
    // Prefix: used on 3.5 of 5 visits, not a move (1 − 2/6), against (1 + 1000·0.0001) of 21,000 visitors.
    expect(networkParts(visitor(), visit(), []).evidence).toBeCloseTo(Math.log((0.7 * (2 / 3)) / (1.1 / 21_000)), 10);
    // AS only: moves (1/3) within the AS, used 4.5 of 5 visits, against (500 + 1000·0.02) of 21,000; or anywhere (1/3).
    const asn = visit({ network: { prefix: '81.2.70.0/24', asn: 2856, kind: 'fixed' } });
    const within = ((2 / 3) * 0.9) / (520 / 21_000);
    expect(networkParts(visitor(), asn, []).evidence).toBeCloseTo(Math.log((1 / 3) * (within + 1 / 3)), 10);
    // One look-alike used the AS too: a new look-alike is there half the time ((1 + share) / 2).
    const rival = visitor({ prefixes: [{ p: '81.2.99.0/24', n: 3, last: NOW }] });
    const shared = ((2 / 3) * 0.9) / ((1 + 520 / 21_000) / 2);
    expect(networkParts(visitor(), asn, [rival]).evidence).toBeCloseTo(Math.log((1 / 3) * (shared + 1 / 3)), 10);
    // One of two look-alikes on the AS (it used another too), the other elsewhere: a new look-alike is there a third of the time.
    const roaming = visitor({
      prefixes: [{ p: '10.1.1.0/24', n: 1, last: NOW }],
      asns: [
        { a: 64500, n: 1, last: NOW },
        { a: 2856, n: 2, last: NOW },
      ],
    });
    const elsewhere = visitor({ prefixes: [{ p: '10.1.2.0/24', n: 1, last: NOW }], asns: [{ a: 9999, n: 1, last: NOW }] });
    const third = ((2 / 3) * 0.9) / ((1 + 520 / 21_000) / 3);
    expect(networkParts(visitor(), asn, [roaming, elsewhere]).evidence).toBeCloseTo(Math.log((1 / 3) * (third + 1 / 3)), 10);
    // On the prefix likewise: a look-alike that used it among other prefixes is a rival.
    const neighbour = visitor({
      prefixes: [
        { p: '10.1.3.0/24', n: 1, last: NOW },
        { p: '81.2.69.0/24', n: 1, last: NOW },
      ],
    });
    expect(networkParts(visitor(), visit(), [neighbour, elsewhere]).evidence).toBeCloseTo(Math.log((0.7 * (2 / 3)) / ((1 + 1.1 / 21_000) / 3)), 10);
    // Neither: a new prefix (1/3) on a new AS (1/3).
    expect(networkParts(visitor(), visit({ network: { prefix: '203.0.113.0/24', asn: 64500, kind: 'fixed' } }), []).evidence).toBeCloseTo(Math.log(1 / 9), 10);
    // An AS unknown: a move, whatever ASes the visitor used.
    expect(networkParts(visitor(), visit({ network: { prefix: '203.0.113.0/24', asn: null, kind: 'mobile' } }), []).kind).toBe('moved');
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
  it('is the visitor’s visits per day (one added, 14 days of prior) over the account’s age', () => {
    // 5 visits in 30 + 14 days, an account of 200 days.
    expect(priorEvidence(visitor(), visit())).toBeCloseTo(Math.log((5 / 44) * 200), 10);
    // A young account counts as 14 days old.
    expect(priorEvidence(visitor(), visit({ account: { ...visit().account, since: NOW - DAY } }))).toBeCloseTo(Math.log((5 / 44) * 14), 10);
  });
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
  it('expects a WebKit visitor away more than a week to have lost its storage, and says how long it was away', () => {
    const safari = (days: number) => features(visitor({ webkit: true, lastSeenAt: NOW - days * DAY }), visit(), fp, []);
    expect(safari(8)).toMatchObject({ itpDue: 1, away: Math.log(9) });
    expect(safari(6).itpDue).toBe(0);
    expect(safari(7).itpDue).toBe(0);
    expect(features(visitor({ lastSeenAt: NOW - 8 * DAY }), visit(), fp, []).itpDue).toBe(0);
    // Judged at a moment before the visitor's last visit (healing looks back): not away at all.
    expect(features(visitor({ lastSeenAt: NOW + DAY }), visit(), fp, []).away).toBe(0);
  });
  it('marks a private window, the fingerprint not compared, the storage evidence and a phone', () => {
    const f = features(visitor(), visit({ incognito: true }), { ...fp, overlap: 0.75, mobile: true }, []);
    expect(f).toMatchObject({ incognito: 1, sparse: 0.25, mobile: 1, storage: storageEvidence(visitor(), visit({ incognito: true })) });
    expect(features(visitor(), visit(), fp, []).incognito).toBe(0);
  });
  it('counts a shared exact key as weaker evidence than a key of its own, and no exact key as the group’s singleton', () => {
    const sole = features(visitor(), visit(), fp, []);
    const shared = features(visitor(), visit({ holders: 5 }), fp, []);
    expect(sole.rarity).toBeCloseTo(-Math.log(anonymity(1, visit().group, visit().account)), 12);
    expect(shared.rarity).toBeCloseTo(-Math.log(6), 12);
    expect(shared.soleHolder).toBe(0);
    const fuzzy = features(visitor(), visit({ holders: 5 }), { ...fp, exact: false }, []);
    expect(fuzzy).toMatchObject({ exact: 0, soleHolder: 0 });
    expect(fuzzy.rarity).toBeCloseTo(sole.rarity, 12);
  });
  it('names the AS case, its rivals and the crowd of candidates', () => {
    const asn = visit({ network: { prefix: '81.2.70.0/24', asn: 2856, kind: 'fixed' }, prefixCrowd: 4 });
    const alone = features(visitor(), asn, fp, []);
    expect(alone).toMatchObject({ samePrefix: 0, prefixEvidence: 0, sameAsn: 1, soleOnAsn: 1, moved: 0, rivalsOnAsn: 0, prefixCrowd: Math.log(5) });
    expect(alone.asnEvidence).toBe(networkParts(visitor(), asn, []).evidence);
    const elsewhere = visitor({ prefixes: [{ p: '81.2.99.0/24', n: 3, last: NOW }], asns: [{ a: 9999, n: 1, last: NOW }] });
    const onAs = visitor({ prefixes: [{ p: '81.2.99.0/24', n: 3, last: NOW }] });
    const rivals = [onAs, onAs, elsewhere];
    const crowded = features(visitor(), asn, fp, rivals);
    expect(crowded).toMatchObject({ sameAsn: 1, soleOnAsn: 0, rivalsOnAsn: Math.log(3), rivalsOnPrefix: 0, crowd: Math.log(4) });
    // On the prefix: the rivals that used it.
    expect(features(visitor(), visit(), fp, rivals).rivalsOnPrefix).toBe(0);
    // Rivals that used the prefix or the AS among others count too.
    const roaming = visitor({
      prefixes: [
        { p: '10.1.3.0/24', n: 1, last: NOW },
        { p: '81.2.69.0/24', n: 1, last: NOW },
      ],
      asns: [
        { a: 64500, n: 1, last: NOW },
        { a: 2856, n: 1, last: NOW },
      ],
    });
    expect(features(visitor(), visit(), fp, [roaming])).toMatchObject({ rivalsOnPrefix: Math.log(2), rivalsOnAsn: Math.log(2) });
  });
  it('names a move, and whether the visit’s exact key is the visitor’s alone, on a desktop or a phone', () => {
    const away = visit({ network: { prefix: '203.0.113.0/24', asn: 64500, kind: 'fixed' } });
    const desktop = features(visitor(), away, fp, []);
    expect(desktop).toMatchObject({ moved: Math.log(1 / 9), samePrefix: 0, sameAsn: 0, asnEvidence: 0, soleOnAsn: 0, movedSoleDesktop: 1, movedSoleMobile: 0 });
    expect(features(visitor(), away, { ...fp, mobile: true }, [])).toMatchObject({ movedSoleDesktop: 0, movedSoleMobile: 1 });
    expect(features(visitor(), visit({ ...away, holders: 2 }), fp, [])).toMatchObject({ movedSoleDesktop: 0, movedSoleMobile: 0 });
    expect(features(visitor(), away, { ...fp, exact: false }, [])).toMatchObject({ movedSoleDesktop: 0, movedSoleMobile: 0 });
    // At home it is no move, on a desktop or a phone.
    expect(features(visitor(), visit(), fp, [])).toMatchObject({ moved: 0, movedSoleDesktop: 0, movedSoleMobile: 0 });
    expect(features(visitor(), visit(), { ...fp, mobile: true }, [])).toMatchObject({ movedSoleDesktop: 0, movedSoleMobile: 0 });
  });
  it('finds no rivals and no crowd on an anonymizer, and no AS rivals without an AS', () => {
    const rival = visitor();
    const vpn = features(visitor(), visit({ network: { prefix: '81.2.69.0/24', asn: 2856, kind: 'anonymizer' }, prefixCrowd: 9 }), fp, [rival]);
    expect(vpn).toMatchObject({
      anonymizer: 1,
      samePrefix: 0,
      rivalsOnPrefix: 0,
      rivalsOnAsn: 0,
      prefixCrowd: 0,
      soleOnPrefix: 0,
      soleOnAsn: 0,
      crowd: Math.log(2),
    });
    const noAsn = features(visitor(), visit({ network: { prefix: '81.2.69.0/24', asn: null, kind: 'fixed' } }), fp, [rival]);
    expect(noAsn).toMatchObject({ samePrefix: 1, rivalsOnPrefix: Math.log(2), rivalsOnAsn: 0 });
  });
  it('counts every kind of change, at most three each', () => {
    const changed = { render: 4, screen: 1, volatile: 2, timezone: 1, fonts: 1, language: 1, languageAdded: 1, hardware: 1, version: 1, other: 2 };
    const f = features(visitor(), visit(), { ...fp, changed }, []);
    expect(f).toMatchObject({
      changedRender: 3,
      changedScreen: 1,
      changedVolatile: 2,
      changedTimezone: 1,
      changedFonts: 1,
      changedLanguage: 1,
      changedLanguageAdded: 1,
      changedHardware: 1,
      changedVersion: 1,
      changedOther: 2,
    });
  });
  it('scores the network alone as the decision weighs it: a home prefix far above a network new to the visitor', () => {
    const home = networkScore(visitor(), visit(), []);
    const away = networkScore(visitor(), visit({ network: { prefix: '203.0.113.0/24', asn: 64500, kind: 'fixed' } }), []);
    expect(home).toBeGreaterThan(away + 3);
    // Only the network features count, each with its weight.
    const unit = Object.fromEntries(Object.keys(features(visitor(), visit(), fp, [])).map((k) => [k, 1])) as unknown as Weights;
    const f = features(visitor(), visit(), fp, []);
    const expected = f.samePrefix + f.prefixEvidence + f.rivalsOnPrefix + f.soleOnPrefix;
    expect(networkScore(visitor(), visit(), [], { ...unit, bias: 1 })).toBeCloseTo(expected, 12);
    const asn = visit({ network: { prefix: '81.2.70.0/24', asn: 2856, kind: 'fixed' } });
    const g = features(visitor(), asn, fp, []);
    expect(networkScore(visitor(), asn, [], { ...unit, bias: 1 })).toBeCloseTo(g.sameAsn + g.asnEvidence + g.soleOnAsn, 12);
    const moved = visit({ network: { prefix: '203.0.113.0/24', asn: 64500, kind: 'fixed' } });
    expect(networkScore(visitor(), moved, [], { ...unit, bias: 1 })).toBeCloseTo(Math.log(1 / 9), 12);
    expect(networkScore(visitor(), visit({ network: { prefix: null, asn: null, kind: 'anonymizer' } }), [visitor()], { ...unit, bias: 1 })).toBe(1);
  });
  it('starts the fit from a model where every kind of change counts against the link', () => {
    const changes = Object.entries(DEFAULT_WEIGHTS).filter(([k]) => k.startsWith('changed'));
    expect(changes).toHaveLength(10);
    for (const [, w] of changes) expect(w).toBeLessThan(0);
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
    // A tie goes to the first listed.
    expect(posterior([{ logOdds: 1 }, { logOdds: 1 }]).best).toBe(0);
  });
  it('gives look-alikes that are not candidates their share: of a new device’s probability, and of the best candidate’s', () => {
    expect(posterior([], Math.log(3))).toEqual({ best: -1, pBest: 0, pNew: expect.closeTo(0.25, 12) });
    const withRest = posterior([{ logOdds: Math.log(3) }], Math.log(6));
    expect(withRest.pBest).toBeCloseTo(0.3, 12);
    expect(withRest.pNew).toBeCloseTo(0.1, 12);
    // Overwhelming evidence stays a probability.
    expect(posterior([{ logOdds: 900 }, { logOdds: -900 }])).toEqual({ best: 0, pBest: 1, pNew: 0 });
  });
});
