// Which visitor an id stands for now. A visitor found to be the continuation
// of an older one is merged into it and its id becomes an alias: every read
// (events, visit history, search, deletion, webhooks) follows the merge to
// the survivor, and from the survivor finds the visitors merged into it.
import type { Store } from '../store/index.js';
import { followMerges, MERGE_HOPS, type VisitorDoc } from '../store/visitors.js';

/** Visitors followed through merges at most: a bound on the reads of one history. */
const ALIASES_CAP = 64;
/** Groups followed at most to name a high-recall id (a group's first visitor joins another only when it merged). */
const HIGH_RECALL_HOPS = 4;

export class VisitorAliases {
  constructor(private readonly store: Store) {}

  /** The account's visitor `visitorId` resolves to (itself, or the visitor it was merged into); null when none. */
  async survivor(accountId: string, visitorId: string): Promise<VisitorDoc | null> {
    const v = await followMerges(visitorId, (id) => this.store.visitors.get(id));
    return v && v.accountId === accountId ? v : null;
  }

  /**
   * The account's surviving visitor of each of `ids`, in batched reads: the
   * ids, then the visitors the merged ones were merged into, for at most
   * `rounds` reads (one read when none was merged; by default as far as
   * `survivor` follows one id). An id that is deleted, another account's,
   * or merged further than the reads went is absent.
   */
  async survivors(accountId: string, ids: readonly string[], rounds = MERGE_HOPS + 1): Promise<Map<string, VisitorDoc>> {
    const docs = new Map<string, VisitorDoc>();
    let wanted = [...new Set(ids)];
    for (let round = 0; wanted.length && round < rounds; round++) {
      const found = await this.store.visitors.getMany(wanted);
      for (const d of found.values()) if (d.accountId === accountId) docs.set(d._id, d);
      wanted = [...new Set([...found.values()].map((d) => d.mergedInto).filter((m): m is string => !!m && !docs.has(m)))];
    }
    const survivorOf = (id: string) => {
      let d = docs.get(id);
      // Ids sharing one chain read it once, however long: the walk is bounded by what was read.
      for (let hops = 0; d?.mergedInto && hops < docs.size; hops++) d = docs.get(d.mergedInto);
      return d && !d.mergedInto ? d : undefined;
    };
    return new Map(ids.flatMap((id) => (survivorOf(id) ? [[id, survivorOf(id)!] as const] : [])));
  }

  /**
   * The high-recall id of a surviving visitor as it stands now: the group it
   * joined, that group's first visitor followed through its merges (and, if
   * that one joined a group in turn, to that group's), or its own id.
   */
  async highRecallOf(survivor: VisitorDoc): Promise<string> {
    let v = survivor;
    for (let hops = 0; v.highRecall && hops < HIGH_RECALL_HOPS; hops++) {
      const next = await this.survivor(v.accountId, v.highRecall);
      if (!next || next._id === v._id) break;
      v = next;
    }
    return v._id;
  }

  /**
   * The visitors merged into `survivor`, however the merges interleaved: its
   * mergedFrom lists, theirs, and so on, each kept only while it still
   * resolves to the survivor (a merge racing with another can leave a list
   * one hop short, an undone one a stale entry for a moment).
   */
  async aliasesOf(survivor: VisitorDoc): Promise<VisitorDoc[]> {
    const found = new Map<string, VisitorDoc>();
    let frontier = survivor.mergedFrom ?? [];
    while (frontier.length && found.size < ALIASES_CAP) {
      const ids = frontier.filter((id) => !found.has(id) && id !== survivor._id);
      const docs = (await Promise.all(ids.map((id) => this.store.visitors.get(id)))).filter((v): v is VisitorDoc => v !== null);
      for (const d of docs) found.set(d._id, d);
      frontier = docs.flatMap((d) => d.mergedFrom ?? []);
    }
    const kept = await Promise.all([...found.values()].map(async (d) => ((await this.survivor(survivor.accountId, d._id))?._id === survivor._id ? d : null)));
    return kept.filter((d): d is VisitorDoc => d !== null);
  }
}
