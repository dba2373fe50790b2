// What a visit, a merge and an undone merge do to a visitor record
// (server/identification/record.ts), and how confidence reads the
// calibration (server/identification/confidence.ts).
import { describe, expect, it } from 'vitest';
import { confidenceOf, SPARSE_CEILING, SPARSE_COVERAGE } from '../../../server/identification/confidence.js';
import { CALIBRATION } from '../../../server/identification/calibration.js';
import { ASNS_CAP, LINKED_CAP, PREFIXES_CAP, TOKENS_CAP, type Match, type Visit, type VisitorRecord } from '../../../server/identification/linker.js';
import type { Components } from '../../../server/identification/components.js';
import { COMPONENT_SETS_CAP, mergeRecords, recordVisit, unmergeRecords } from '../../../server/identification/record.js';

const T0 = Date.UTC(2026, 0, 15);
/** A component set with enough of the stable weight to vouch for a token (matcher.ts TOKEN_OVERLAP), told apart by its canvas. */
const set = (canvas: string): Components => ({
  timezone: 'Europe/Berlin',
  fonts: 'Arial',
  screen: '1920x1080',
  hardware: '[8,16,null]',
  fontPreferences: 'fp',
  mediaPrefs: 'm',
  canvas,
});
const blank = (id: string, o: Partial<VisitorRecord> = {}): VisitorRecord => ({
  id,
  components: [set('c1')],
  visitCount: 0,
  firstSeenAt: T0,
  lastSeenAt: T0,
  prefixes: [],
  asns: [],
  novelPrefixes: 0,
  novelAsns: 0,
  webkit: false,
  tokens: [],
  linked: [],
  mergedInto: null,
  highRecall: null,
  suspects: [],
  residual: null,
  ...o,
});
const visitAt = (now: number, prefix: string, asn: number, tokenHash: string | null, components = set('c1')): Visit => ({
  components,
  tokenHash,
  linkedId: null,
  network: { prefix, asn, kind: 'fixed' },
  incognito: false,
  now,
});
const match = (visitorId: string, o: Partial<Match> = {}): Match => ({ visitorId, kind: 'token', p: 1, tokenRejected: false, ...o });

describe('recordVisit', () => {
  it('counts the visit, keeps the last component sets and the first visit time', () => {
    let v = recordVisit(blank('a'), match('a'), visitAt(T0 + 1, '1.1.1.0/24', 1, 't1'));
    expect(v).toMatchObject({ visitCount: 1, firstSeenAt: T0 + 1, lastSeenAt: T0 + 1, components: [set('c1')] });
    v = recordVisit(v, match('a'), visitAt(T0 + 2, '1.1.1.0/24', 1, 't1', set('c2')));
    expect(v).toMatchObject({ visitCount: 2, firstSeenAt: T0 + 1, lastSeenAt: T0 + 2, components: [set('c2'), set('c1')] });
  });

  it('keeps every recent distinct configuration, newest first, so that one coming back is still matched', () => {
    const at = (i: number, canvas: string) => visitAt(T0 + i, '1.1.1.0/24', 1, 't1', set(canvas));
    let v = recordVisit(blank('a'), match('a'), at(1, 'home'));
    // Docked at home, away, home again: the docked set is not forgotten because home came back.
    for (const [i, c] of ['docked', 'away', 'home', 'home'].entries()) v = recordVisit(v, match('a'), at(2 + i, c));
    expect(v.components).toEqual([set('home'), set('away'), set('docked')]);
    v = recordVisit(v, match('a'), at(9, 'hotel'));
    expect(v.components).toHaveLength(COMPONENT_SETS_CAP);
    expect(v.components).toEqual([set('hotel'), set('home'), set('away')]);
  });

  it('takes a set that differs only in a related-only component (fontMetrics) for the same set, and keeps the newer one', () => {
    const at = (i: number, c: Components) => visitAt(T0 + i, '1.1.1.0/24', 1, 't1', c);
    let v = recordVisit(blank('a'), match('a'), at(1, set('home')));
    v = recordVisit(v, match('a'), at(2, set('away')));
    // Stored before the signal existed, then with it, then with another value: still the two sets home and away.
    v = recordVisit(v, match('a'), at(3, { ...set('home'), fontMetrics: 'm1' }));
    expect(v.components).toEqual([{ ...set('home'), fontMetrics: 'm1' }, set('away')]);
    v = recordVisit(v, match('a'), at(4, { ...set('home'), fontMetrics: 'm2' }));
    expect(v.components).toEqual([{ ...set('home'), fontMetrics: 'm2' }, set('away')]);
    // A visit that failed to collect it keeps the stored value; another set does not take it.
    v = recordVisit(v, match('a'), at(5, set('home')));
    expect(v.components).toEqual([{ ...set('home'), fontMetrics: 'm2' }, set('away')]);
    v = recordVisit(v, match('a'), at(6, set('hotel')));
    expect(v.components).toEqual([set('hotel'), { ...set('home'), fontMetrics: 'm2' }, set('away')]);
  });

  it('keeps no set with too few signals to vouch for a token, unless the visitor has no other', () => {
    const sparse = { timezone: 'Europe/Berlin', screen: '1920x1080' };
    let v = recordVisit(blank('a'), match('a'), visitAt(T0 + 1, '1.1.1.0/24', 1, 't1'));
    v = recordVisit(v, match('a'), visitAt(T0 + 2, '1.1.1.0/24', 1, 't1', sparse));
    expect(v.components).toEqual([set('c1')]);
    expect(recordVisit(blank('b', { components: [] }), match('b'), visitAt(T0 + 3, '1.1.1.0/24', 1, null, sparse)).components).toEqual([sparse]);
    expect(recordVisit(blank('b'), match('b'), visitAt(T0 + 3, '1.1.1.0/24', 1, null, sparse)).components).toEqual([sparse]);
  });

  it('counts networks new to the visitor, and keeps each one with its visits, newest first, within caps', () => {
    let v = blank('a');
    for (let i = 0; i < PREFIXES_CAP + 3; i++) v = recordVisit(v, match('a'), visitAt(T0 + i, `10.0.${i}.0/24`, 100 + (i % (ASNS_CAP + 2)), null));
    v = recordVisit(v, match('a'), visitAt(T0 + 99, '10.0.0.0/24', 100, null));
    expect(v.prefixes).toHaveLength(PREFIXES_CAP);
    expect(v.asns).toHaveLength(ASNS_CAP);
    expect(v.prefixes[0]).toEqual({ p: '10.0.0.0/24', n: 1, last: T0 + 99 });
    expect(v.novelPrefixes).toBe(PREFIXES_CAP + 3 + 1);
    expect(v.asns[0]!.a).toBe(100);
    // ASes fall out of the remembered ones and count as new when they come back.
    expect(v.novelAsns).toBe(PREFIXES_CAP + 3);
    v = recordVisit(v, match('a'), visitAt(T0 + 100, '10.0.0.0/24', 100, null));
    expect(v.prefixes[0]).toEqual({ p: '10.0.0.0/24', n: 2, last: T0 + 100 });
    expect(v.novelPrefixes).toBe(PREFIXES_CAP + 4);
  });

  it('remembers when each token was first and last presented, not a rejected one, within a cap', () => {
    let v = recordVisit(blank('a'), match('a'), visitAt(T0, 'p', 1, 't1'));
    v = recordVisit(v, match('a'), visitAt(T0 + 5, 'p', 1, 't1'));
    expect(v.tokens).toEqual([{ hash: 't1', first: T0, last: T0 + 5 }]);
    v = recordVisit(v, match('a', { tokenRejected: true }), visitAt(T0 + 6, 'p', 1, 'stolen'));
    expect(v.tokens.map((t) => t.hash)).toEqual(['t1']);
    for (let i = 0; i < TOKENS_CAP + 2; i++) v = recordVisit(v, match('a'), visitAt(T0 + 10 + i, 'p', 1, `x${i}`));
    expect(v.tokens).toHaveLength(TOKENS_CAP);
    expect(v.tokens[0]!.hash).toBe(`x${TOKENS_CAP + 1}`);
  });

  it('marks a token seen only in private windows ephemeral, until a normal window presents it', () => {
    const inPrivate = (now: number, token: string) => ({ ...visitAt(now, 'p', 1, token), incognito: true });
    let v = recordVisit(blank('a'), match('a'), inPrivate(T0, 'w1'));
    expect(v.tokens).toEqual([{ hash: 'w1', first: T0, last: T0, ephemeral: true }]);
    v = recordVisit(v, match('a'), inPrivate(T0 + 1, 'w1'));
    expect(v.tokens[0]).toEqual({ hash: 'w1', first: T0, last: T0 + 1, ephemeral: true });
    v = recordVisit(v, match('a'), visitAt(T0 + 2, 'p', 1, 'w1'));
    expect(v.tokens[0]).toEqual({ hash: 'w1', first: T0, last: T0 + 2 });
    // A token a normal window kept stays kept when a private window (wrongly flagged) shows it.
    v = recordVisit(v, match('a'), inPrivate(T0 + 3, 'w1'));
    expect(v.tokens[0]!.ephemeral).toBeUndefined();
  });

  it('remembers the linkedIds it was seen with, newest first, within a cap; a visit without one changes nothing', () => {
    const signedIn = (now: number, linkedId: string | null) => ({ ...visitAt(now, 'p', 1, null), linkedId });
    let v = recordVisit(blank('a'), match('a'), signedIn(T0, 'ada'));
    v = recordVisit(v, match('a'), signedIn(T0 + 1, null));
    expect(v.linked).toEqual(['ada']);
    for (let i = 0; i < LINKED_CAP + 1; i++) v = recordVisit(v, match('a'), signedIn(T0 + 2 + i, `member${i}`));
    v = recordVisit(v, match('a'), signedIn(T0 + 9, 'member2'));
    expect(v.linked).toEqual(['member2', 'member4', 'member3', 'member1']);
  });

  it('takes the suspects a young visitor came out of the visit with', () => {
    const v = recordVisit(blank('a', { suspects: [{ id: 'u', logOdds: 1, net: 0, since: T0 }] }), match('a', { suspects: [] }), visitAt(T0, 'p', 1, null));
    expect(v.suspects).toEqual([]);
    const kept = recordVisit(blank('a', { suspects: [{ id: 'u', logOdds: 1, net: 0, since: T0 }] }), match('a'), visitAt(T0, 'p', 1, null));
    expect(kept.suspects).toHaveLength(1);
  });
});

describe('merge and unmerge', () => {
  const older = blank('u', {
    visitCount: 5,
    firstSeenAt: T0,
    lastSeenAt: T0 + 10,
    prefixes: [{ p: 'home', n: 5, last: T0 + 10 }],
    asns: [{ a: 1, n: 5, last: T0 + 10 }],
    novelPrefixes: 1,
    novelAsns: 1,
    tokens: [{ hash: 'tu', first: T0, last: T0 + 10 }],
  });
  const young = blank('b', {
    visitCount: 2,
    firstSeenAt: T0 + 20,
    lastSeenAt: T0 + 30,
    components: [set('c9')],
    prefixes: [
      { p: 'home', n: 1, last: T0 + 30 },
      { p: 'cafe', n: 1, last: T0 + 20 },
    ],
    asns: [{ a: 1, n: 2, last: T0 + 30 }],
    novelPrefixes: 2,
    novelAsns: 1,
    tokens: [{ hash: 'tb', first: T0 + 20, last: T0 + 30 }],
    suspects: [{ id: 'u', logOdds: 2, net: 0, since: T0 + 20 }],
  });

  it("gives the survivor the young visitor's visits, networks, tokens (marked) and latest components", () => {
    const { from, into, aliases } = mergeRecords(young, older, [blank('z', { mergedInto: 'b' })]);
    expect(from).toMatchObject({ mergedInto: 'u', suspects: [] });
    expect(into).toMatchObject({ visitCount: 7, firstSeenAt: T0, lastSeenAt: T0 + 30, components: [set('c9')], novelPrefixes: 3, novelAsns: 2 });
    expect(into.prefixes).toEqual([
      { p: 'home', n: 6, last: T0 + 30 },
      { p: 'cafe', n: 1, last: T0 + 20 },
    ]);
    expect(into.asns).toEqual([{ a: 1, n: 7, last: T0 + 30 }]);
    expect(into.tokens).toEqual([
      { hash: 'tb', first: T0 + 20, last: T0 + 30, via: 'b' },
      { hash: 'tu', first: T0, last: T0 + 10 },
    ]);
    expect(aliases).toEqual([expect.objectContaining({ id: 'z', mergedInto: 'u' })]);
    // The survivor was seen with the linkedIds of both, the newer visitor's first.
    expect(mergeRecords({ ...young, linked: ['ada', 'kid'] }, { ...older, linked: ['ada', 'grace'] }, []).into.linked).toEqual(['ada', 'kid', 'grace']);
  });

  it('undoes it: the young visitor stands alone with its tokens again', () => {
    const { from, into } = mergeRecords(young, older, []);
    const undone = unmergeRecords(from, into);
    expect(undone.from).toMatchObject({ mergedInto: null, suspects: [], tokens: [{ hash: 'tb', first: T0 + 20, last: T0 + 30 }] });
    expect(undone.into.tokens).toEqual([{ hash: 'tu', first: T0, last: T0 + 10 }]);
    expect(undone.into.visitCount).toBe(5);
  });
});

describe('confidence', () => {
  it('is the calibrated chance of being right for the path and the decision probability', () => {
    for (const kind of ['token', 'exact', 'fuzzy', 'new'] as const) {
      const knots = CALIBRATION[kind];
      const [x, y] = knots[Math.floor(knots.length / 2)]!;
      expect(confidenceOf({ kind, p: x, coverage: 1 })).toBe(Math.min(0.99, Math.round(y * 100) / 100));
    }
  });
  it('interpolates between knots and holds beyond the ends', () => {
    const [[x0, y0], [x1, y1]] = CALIBRATION.new as [[number, number], [number, number]];
    expect(confidenceOf({ kind: 'new', p: (x0 + x1) / 2, coverage: 1 })).toBe(Math.round(((y0 + y1) / 2) * 100) / 100);
    expect(confidenceOf({ kind: 'new', p: 0, coverage: 1 })).toBe(Math.round(y0 * 100) / 100);
  });
  it('never claims certainty', () => {
    expect(confidenceOf({ kind: 'exact', p: 1, coverage: 1 })).toBeLessThanOrEqual(0.99);
  });
  it('stays low when few signals were collected', () => {
    expect(confidenceOf({ kind: 'exact', p: 1, coverage: 0.15 })).toBeLessThan(SPARSE_CEILING);
    expect(confidenceOf({ kind: 'exact', p: 1, coverage: SPARSE_COVERAGE / 2 })).toBeLessThan(confidenceOf({ kind: 'exact', p: 1, coverage: SPARSE_COVERAGE }));
    expect(confidenceOf({ kind: 'exact', p: 1, coverage: SPARSE_COVERAGE })).toBeGreaterThan(0.9);
  });
});
