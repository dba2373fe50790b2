// What a visit, a merge and an undone merge do to visitor records: pure
// functions shared by the store (server/store/visitors.ts) and the accuracy
// benchmark's in-memory index, so both keep the same state.
import { isWebkit } from './components.js';
import { withVisit, type Match, type Visit, type VisitorRecord } from './linker.js';

/** Visitors kept per exact key (the newest holders); partial-key candidate lists. */
export const HOLDERS_CAP = 16;
export const PARTIAL_CAP = 10;
/** Visitors of one device model kept per prefix and per AS. */
export const ON_PREFIX_CAP = 8;
export const ON_ASN_CAP = 16;

/** The visitor after this visit: counted, its networks, tokens and last two component sets. */
export function recordVisit(v: VisitorRecord, match: Match, visit: Visit): VisitorRecord {
  const first = v.visitCount === 0;
  return {
    ...v,
    ...withVisit(v, visit, match.tokenRejected ? null : visit.tokenHash),
    visitCount: v.visitCount + 1,
    firstSeenAt: first ? visit.now : v.firstSeenAt,
    lastSeenAt: visit.now,
    components: first ? [visit.components] : [visit.components, v.components[0]!],
    webkit: isWebkit(visit.components),
    suspects: match.suspects ?? v.suspects,
    residual: match.suspects && !match.suspects.length ? null : v.residual,
  };
}

const sumBy = <T, K>(a: T[], b: T[], key: (x: T) => K, add: (x: T, y: T) => T, cap: number, order: (x: T) => number): T[] => {
  const out = new Map<K, T>();
  for (const x of [...a, ...b]) {
    const k = key(x);
    const y = out.get(k);
    out.set(k, y ? add(x, y) : x);
  }
  return [...out.values()].sort((x, y) => order(y) - order(x)).slice(0, cap);
};

/**
 * `from` (a young visitor found to be `into`'s split) becomes an alias:
 * `into` takes its visits, networks and tokens (marked as come with `from`,
 * so that the merge can be undone), and visitors that were aliases of
 * `from` now point at `into` directly.
 */
export function mergeRecords(from: VisitorRecord, into: VisitorRecord, aliasesOfFrom: VisitorRecord[]) {
  const survivor: VisitorRecord = {
    ...into,
    visitCount: into.visitCount + from.visitCount,
    firstSeenAt: Math.min(into.firstSeenAt, from.firstSeenAt),
    lastSeenAt: Math.max(into.lastSeenAt, from.lastSeenAt),
    components: from.lastSeenAt > into.lastSeenAt ? from.components : into.components,
    prefixes: sumBy(
      into.prefixes,
      from.prefixes,
      (p) => p.p,
      (x, y) => ({ p: x.p, n: x.n + y.n, last: Math.max(x.last, y.last) }),
      8,
      (p) => p.last,
    ),
    asns: sumBy(
      into.asns,
      from.asns,
      (a) => a.a,
      (x, y) => ({ a: x.a, n: x.n + y.n, last: Math.max(x.last, y.last) }),
      6,
      (a) => a.last,
    ),
    novelPrefixes: into.novelPrefixes + from.novelPrefixes,
    novelAsns: into.novelAsns + from.novelAsns,
    tokens: [...into.tokens, ...from.tokens.map((t) => ({ ...t, via: t.via ?? from.id }))].sort((a, b) => b.last - a.last).slice(0, 8),
  };
  return {
    from: { ...from, mergedInto: into.id, suspects: [], residual: null },
    into: survivor,
    aliases: aliasesOfFrom.map((a) => ({ ...a, mergedInto: into.id })),
  };
}

/** Undoes mergeRecords as far as it can: `from` stands alone with its tokens; `into` keeps what it learnt. */
export function unmergeRecords(from: VisitorRecord, into: VisitorRecord) {
  const own = into.tokens.filter((t) => t.via === from.id).map(({ via: _, ...t }) => t);
  return {
    from: {
      ...from,
      mergedInto: null,
      suspects: [],
      residual: null,
      tokens: [...own, ...from.tokens.filter((t) => !own.some((o) => o.hash === t.hash))].slice(0, 8),
    },
    into: { ...into, visitCount: Math.max(into.visitCount - from.visitCount, 1), tokens: into.tokens.filter((t) => t.via !== from.id) },
  };
}
