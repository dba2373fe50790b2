// The store's matching index (server/store/identity.ts) in memory, with the
// same semantics: first writer wins a claim, bounded lists of holders and
// partial-key candidates, counters of visitors per prefix, AS and device
// group, aliases for merged visitors. The benchmark runs the service's
// link() over it; http-check.ts compares both on the real service.
import type { Components } from '../../server/identification/components.js';
import { recordVisit } from '../../server/identification/record.js';
import type { LinkIndex, Match, Visit, VisitorRecord } from '../../server/identification/linker.js';
import { mergeRecords, unmergeRecords } from '../../server/identification/record.js';
import {
  HOLDERS_CAP,
  LINKED_VISITORS_CAP,
  ON_ASN_CAP,
  ON_PREFIX_CAP,
  PARTIAL_CAP,
  RELATED_CAP,
  type Lookup,
  type LookupQuery,
  type Remembered,
} from '../../server/store/identity.js';
import type { Suspect } from '../../server/store/visitors.js';
import { relatedKeysOf, relatedOf, type Relative } from '../../server/identification/related.js';
import { survivorOf } from './gap.js';

/** A key went from k to k + 1 holders: move it between the Good–Turing counts. */
export function shiftCounts(c: { n1: number; n2: number; n3: number }, k: number) {
  if (k === 1) c.n1--;
  if (k === 2) c.n2--;
  if (k === 3) c.n3--;
  if (k === 0) c.n1++;
  if (k === 1) c.n2++;
  if (k === 2) c.n3++;
}

export class MemoryIndex implements LinkIndex {
  private readonly tokens = new Map<string, string>();
  private readonly exact = new Map<string, { holders: string[]; n: number }>();
  private readonly partials = new Map<string, string[]>();
  private readonly onNetwork = new Map<string, string[]>();
  private readonly linked = new Map<string, string[]>();
  private readonly related = new Map<string, { visitorIds: string[]; n: number }>();
  private readonly prefixes = new Map<string, number>();
  private readonly asns = new Map<number, number>();
  private readonly groups = new Map<string, { n1: number; n2: number; n3: number }>();
  private readonly account = { visitors: 0, since: Number.NaN, n1: 0, n2: 0, n3: 0 };
  readonly visitors = new Map<string, VisitorRecord>();
  private seq = 0;

  async tokenOwner(t: string) {
    return this.tokens.get(t) ?? null;
  }

  async lookup(q: LookupQuery): Promise<Lookup> {
    const x = q.exact ? this.exact.get(q.exact) : undefined;
    return {
      holders: x?.holders ?? [],
      holderCount: x?.n ?? 0,
      partials: [...new Set(q.partials.flatMap((k) => this.partials.get(k) ?? []))],
      onPrefix: q.prefix ? (this.onNetwork.get(`${q.model}|${q.prefix}`) ?? []) : [],
      onAsn: q.asn !== null ? (this.onNetwork.get(`${q.model}|AS${q.asn}`) ?? []) : [],
      prefixCrowd: q.prefix ? (this.prefixes.get(q.prefix) ?? 0) : 0,
      asnCrowd: q.asn !== null ? (this.asns.get(q.asn) ?? 0) : 0,
      group: { ...(this.groups.get(q.group) ?? { n1: 0, n2: 0, n3: 0 }) },
      account: { ...this.account, since: Number.isNaN(this.account.since) ? q.now : this.account.since },
      linked: q.linked ? (this.linked.get(q.linked) ?? []) : [],
    };
  }

  async visitor(id: string) {
    const v = this.visitors.get(id);
    return v ? structuredClone(v) : null;
  }

  async createVisitor(components: Components, suspects: Suspect[], residual: number | null, highRecall: string | null = null) {
    const id = `v${++this.seq}`;
    this.visitors.set(id, {
      id,
      components: [components],
      visitCount: 0,
      firstSeenAt: Number.NaN,
      lastSeenAt: Number.NaN,
      prefixes: [],
      asns: [],
      novelPrefixes: 0,
      novelAsns: 0,
      webkit: false,
      tokens: [],
      linked: [],
      mergedInto: null,
      highRecall,
      suspects,
      residual,
    });
    return id;
  }

  async dropVisitor(id: string) {
    this.visitors.delete(id);
  }

  async claimToken(t: string, id: string) {
    const owner = this.tokens.get(t);
    if (owner !== undefined) return owner;
    this.tokens.set(t, id);
    return id;
  }

  async moveToken(t: string, from: string, to: string) {
    if (this.tokens.get(t) === from) this.tokens.set(t, to);
    return this.tokens.get(t)!;
  }

  async merge(from: string, into: string) {
    const a = this.visitors.get(from)!;
    const b = this.visitors.get(into)!;
    if (a.mergedInto === into) return;
    const {
      from: merged,
      into: survivor,
      aliases,
    } = mergeRecords(
      a,
      b,
      [...this.visitors.values()].filter((v) => v.mergedInto === from),
    );
    this.visitors.set(from, merged);
    this.visitors.set(into, survivor);
    for (const alias of aliases) this.visitors.set(alias.id, alias);
    for (const t of merged.tokens) if (this.tokens.get(t.hash) === from) this.tokens.set(t.hash, into);
  }

  async unmerge(from: string, into: string) {
    const a = this.visitors.get(from)!;
    const b = this.visitors.get(into)!;
    const { from: restored, into: survivor } = unmergeRecords(a, b);
    this.visitors.set(from, restored);
    this.visitors.set(into, survivor);
    for (const t of restored.tokens) if (this.tokens.get(t.hash) === into) this.tokens.set(t.hash, from);
  }

  async remember(r: Remembered) {
    for (const t of [r.tokenHash, ...(r.moreTokens ?? [])]) if (t) this.tokens.set(t, r.visitorId);
    if (r.created) {
      this.account.visitors++;
      if (Number.isNaN(this.account.since)) this.account.since = this.visitors.get(r.visitorId)!.firstSeenAt;
    }
    if (r.exact && !r.heldExact) {
      const doc = this.exact.get(r.exact) ?? this.exact.set(r.exact, { holders: [], n: 0 }).get(r.exact)!;
      if (!doc.holders.includes(r.visitorId)) {
        const g = this.groups.get(r.group) ?? this.groups.set(r.group, { n1: 0, n2: 0, n3: 0 }).get(r.group)!;
        for (const c of [g, this.account]) shiftCounts(c, doc.n);
        doc.n++;
        doc.holders = [r.visitorId, ...doc.holders].slice(0, HOLDERS_CAP);
      }
    }
    for (const k of r.partials) {
      const ids = this.partials.get(k) ?? [];
      if (ids[0] !== r.visitorId) this.partials.set(k, [r.visitorId, ...ids.filter((x) => x !== r.visitorId)].slice(0, PARTIAL_CAP));
    }
    const onNetwork = (key: string, cap: number) => {
      const ids = this.onNetwork.get(key) ?? [];
      this.onNetwork.set(key, [r.visitorId, ...ids.filter((x) => x !== r.visitorId)].slice(0, cap));
    };
    if (r.newPrefix) {
      this.prefixes.set(r.newPrefix, (this.prefixes.get(r.newPrefix) ?? 0) + 1);
      onNetwork(`${r.model}|${r.newPrefix}`, ON_PREFIX_CAP);
    }
    if (r.newAsn !== null) {
      this.asns.set(r.newAsn, (this.asns.get(r.newAsn) ?? 0) + 1);
      onNetwork(`${r.model}|AS${r.newAsn}`, ON_ASN_CAP);
    }
    if (r.related) {
      const list = this.related.get(r.related) ?? { visitorIds: [], n: 0 };
      if (!list.visitorIds.includes(r.visitorId))
        this.related.set(r.related, { visitorIds: [r.visitorId, ...list.visitorIds].slice(0, RELATED_CAP), n: list.n + 1 });
    }
    if (r.linked) {
      const ids = this.linked.get(r.linked) ?? [];
      this.linked.set(r.linked, [r.visitorId, ...ids.filter((x) => x !== r.visitorId)].slice(0, LINKED_VISITORS_CAP));
    }
  }

  /** The visitor's related visitors in `projectId`, as the service answers them (server/visitors/related.ts). */
  relatedTo(visitorId: string, projectId: string): Relative[] {
    const self = this.current(visitorId);
    if (!self) return [];
    const lists = relatedKeysOf(projectId, self).flatMap(({ key, prefix }) => {
      const list = this.related.get(key);
      return list ? [{ prefix, ...list }] : [];
    });
    return relatedOf(self, lists, (id) => this.current(id));
  }

  /** The visitor an id stands for now (merges followed). */
  private current(id: string): VisitorRecord | null {
    return this.visitors.get(survivorOf(this.visitors, id)) ?? null;
  }

  /** What the service writes after a visit (record.ts recordVisit): counts the visit and takes what it changes. */
  record(match: Match, visit: Visit): VisitorRecord {
    const before = this.visitors.get(match.visitorId)!;
    const after = recordVisit(before, match, visit);
    this.visitors.set(after.id, after);
    return before;
  }
}
