// What a visit, a merge and an undone merge do to a visitor: pure functions.
// On records (identification's view of a visitor), shared by the service and
// the accuracy benchmark's in-memory index so both keep the same state; and
// on visitor documents, which the service then writes by a compare-and-swap
// (server/store/visitors.ts `update`).
import type { RecentActivity, VisitorDoc } from '../store/visitors.js';
import { pageOf, type StoredVisit } from '../store/visits.js';
import { coverage, isMatched, isWebkit, RELATED_ONLY, type Components } from './components.js';
import { TOKEN_OVERLAP } from './matcher.js';
import { ASNS_CAP, LINKED_CAP, PREFIXES_CAP, TOKENS_CAP, withVisit, type Match, type Visit, type VisitorRecord } from './linker.js';

/**
 * Activity kept per visitor for velocity: the last 24 hours, at most this many
 * events (beyond it the 24-hour counts saturate; highActivity fires long before).
 */
export const RECENT_CAP = 5_000;

/** Distinct component sets kept per visitor, newest first. */
export const COMPONENT_SETS_CAP = 3;

/** The visitor as identification sees it. */
export function toRecord(d: VisitorDoc): VisitorRecord {
  return {
    id: d._id,
    // Stored component sets are the ones extractComponents made: their names are ComponentNames.
    components: Array.isArray(d.components) ? d.components : [d.components],
    visitCount: d.visitCount + (d.mergedVisits ?? 0),
    firstSeenAt: d.firstSeenAt,
    lastSeenAt: d.lastSeenAt,
    prefixes: d.prefixes ?? [],
    asns: d.asns ?? [],
    novelPrefixes: d.novelPrefixes ?? 0,
    novelAsns: d.novelAsns ?? 0,
    webkit: d.webkit ?? false,
    tokens: d.tokens ?? [],
    linked: d.linked ?? [],
    suspects: d.suspects ?? [],
    residual: d.residual ?? null,
    mergedInto: d.mergedInto ?? null,
    highRecall: d.highRecall ?? null,
  };
}

/** The fields of a visitor document that hold a record's state (not its counters). */
const stateOf = (r: VisitorRecord) => ({
  components: r.components,
  prefixes: r.prefixes,
  asns: r.asns,
  novelPrefixes: r.novelPrefixes,
  novelAsns: r.novelAsns,
  webkit: r.webkit,
  tokens: r.tokens,
  linked: r.linked,
  suspects: r.suspects,
  residual: r.residual,
  ...(r.highRecall ? { highRecall: r.highRecall } : {}),
});

/** What counting a visit on a visitor gives, before anything is written. */
export interface CountedVisit {
  /** The visit's sequence number on this visitor. */
  seq: number;
  /** Visits of the device (this visitor's and its merged visitors'), this one included. */
  visitCount: number;
  firstSeenAt: number;
  previousSeenAt: number;
  /** The visitor's activity within the window, this visit included (what velocity is judged on). */
  recent: RecentActivity[];
  /** Entries of the stored activity that fell out of the window. */
  expired: number;
}

/** Counts a visit on `before` (the document read): its sequence number, the device's counts, its recent activity. */
export function countVisit(before: VisitorDoc, activity: RecentActivity, windowMs: number): CountedVisit {
  const first = before.visitCount === 0;
  const kept = before.recent.filter((r) => r.t > activity.t - windowMs);
  const seq = before.visitCount + 1;
  return {
    seq,
    visitCount: seq + (before.mergedVisits ?? 0),
    firstSeenAt: first ? activity.t : before.firstSeenAt,
    previousSeenAt: first ? activity.t : before.lastSeenAt,
    recent: [...kept.slice(Math.max(0, kept.length + 1 - RECENT_CAP)), activity],
    expired: before.recent.length - kept.length,
  };
}

/**
 * The visitor document after the visit: what identification learnt, the
 * counters, the visit's summary on the current page (a new page starts
 * empty; the store moves the finished one), and the activity appended, or
 * rewritten without its expired entries once enough of them have piled up.
 */
export function afterVisit(before: VisitorDoc, match: Match, visit: Visit, counted: CountedVisit, summary: StoredVisit): VisitorDoc {
  const page = pageOf(counted.seq);
  const embedded = before.visits ?? [];
  const current = embedded.filter((v) => pageOf(v.seq) === page);
  const rewrite = before.recent.length + 1 > RECENT_CAP || counted.expired > Math.max(8, before.recent.length / 8);
  return {
    ...before,
    ...stateOf(recordVisit(toRecord(before), match, visit)),
    visitCount: counted.seq,
    firstSeenAt: before.visitCount === 0 ? visit.now : before.firstSeenAt,
    lastSeenAt: visit.now,
    visits: [...(current.length === embedded.length ? embedded : current), summary],
    recent: rewrite ? counted.recent : [...before.recent, counted.recent[counted.recent.length - 1]!],
  };
}

/** The survivor's document after `from` is merged into it (mergeRecords, with the counts of visits it takes). */
export function mergedDoc(from: VisitorDoc, into: VisitorDoc): VisitorDoc {
  const { into: survivor } = mergeRecords(toRecord(from), toRecord(into), []);
  return {
    ...into,
    ...stateOf(survivor),
    firstSeenAt: survivor.firstSeenAt,
    lastSeenAt: survivor.lastSeenAt,
    mergedVisits: (into.mergedVisits ?? 0) + from.visitCount + (from.mergedVisits ?? 0),
    mergedFrom: [...new Set([...(into.mergedFrom ?? []), from._id, ...(from.mergedFrom ?? [])])],
  };
}

/** The two documents after unmergeRecords: `from` stands alone with its tokens, `into` no longer counts its visits. */
export function unmergedDocs(from: VisitorDoc, into: VisitorDoc): { from: VisitorDoc; into: VisitorDoc } {
  const { from: restored, into: survivor } = unmergeRecords(toRecord(from), toRecord(into));
  return {
    from: { ...from, mergedInto: null, suspects: [], residual: null, tokens: restored.tokens },
    into: {
      ...into,
      tokens: survivor.tokens,
      mergedVisits: (into.mergedVisits ?? 0) - (from.visitCount + (from.mergedVisits ?? 0)),
      mergedFrom: (into.mergedFrom ?? []).filter((id) => id !== from._id),
    },
  };
}

/**
 * Whether two component sets hold the same values (the same components
 * present, none changed), of the components the matcher weighs: one that
 * differs only in a related-only component (or lacks it, stored before it
 * existed) is the same set, and the newer replaces it, so that keeping them
 * changes nothing identification keeps.
 */
export function sameComponents(a: Components, b: Components): boolean {
  const keys = Object.keys(a).filter(isMatched);
  return keys.length === Object.keys(b).filter(isMatched).length && keys.every((k) => a[k] === b[k]);
}

/**
 * The visit's set first, then the other kept sets (at most
 * COMPONENT_SETS_CAP). The kept set that is the same as the visit's gives
 * way to it, and gives it the related-only components the visit failed to
 * collect (the agent's budget, no canvas, an older agent): a visit that
 * lacks them does not erase what an earlier one collected.
 */
function withVisitSet(c: Components, kept: readonly Components[]): Components[] {
  const same = kept.find((k) => sameComponents(k, c));
  const carried: Components = {};
  for (const n of RELATED_ONLY) if (c[n] === undefined && same?.[n] !== undefined) carried[n] = same[n];
  return [{ ...carried, ...c }, ...kept.filter((k) => k !== same)].slice(0, COMPONENT_SETS_CAP);
}

/** The visitor after this visit: counted, its networks, tokens and its last distinct component sets. */
export function recordVisit(v: VisitorRecord, match: Match, visit: Visit): VisitorRecord {
  const first = v.visitCount === 0;
  return {
    ...v,
    ...withVisit(v, visit, match.tokenRejected ? null : visit.tokenHash),
    visitCount: v.visitCount + 1,
    firstSeenAt: first ? visit.now : v.firstSeenAt,
    lastSeenAt: visit.now,
    // Every recent configuration the device showed is kept (docked and undocked, home and away): it may come back without its storage in any of them.
    // A visit with too few signals to vouch for a token (TOKEN_OVERLAP) is not one of them: it would push out a set that can.
    components:
      first || !v.components.length
        ? [visit.components]
        : coverage(visit.components) < TOKEN_OVERLAP
          ? v.components
          : withVisitSet(visit.components, v.components),
    webkit: isWebkit(visit.components),
    suspects: match.suspects ?? v.suspects,
    residual: match.suspects && !match.suspects.length ? null : v.residual,
    highRecall: v.highRecall ?? match.highRecall ?? null,
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
      PREFIXES_CAP,
      (p) => p.last,
    ),
    asns: sumBy(
      into.asns,
      from.asns,
      (a) => a.a,
      (x, y) => ({ a: x.a, n: x.n + y.n, last: Math.max(x.last, y.last) }),
      ASNS_CAP,
      (a) => a.last,
    ),
    novelPrefixes: into.novelPrefixes + from.novelPrefixes,
    novelAsns: into.novelAsns + from.novelAsns,
    tokens: [...into.tokens, ...from.tokens.map((t) => ({ ...t, via: t.via ?? from.id }))].sort((a, b) => b.last - a.last).slice(0, TOKENS_CAP),
    linked: [...new Set([...(from.lastSeenAt > into.lastSeenAt ? [from.linked, into.linked] : [into.linked, from.linked]).flat()])].slice(0, LINKED_CAP),
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
      tokens: [...own, ...from.tokens.filter((t) => !own.some((o) => o.hash === t.hash))].slice(0, TOKENS_CAP),
    },
    into: { ...into, visitCount: Math.max(into.visitCount - from.visitCount, 1), tokens: into.tokens.filter((t) => t.via !== from.id) },
  };
}
