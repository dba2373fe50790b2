// Which visitor an id stands for now. A visitor found to be the continuation
// of an older one is merged into it and its id becomes an alias: every read
// (events, visit history, search, deletion, webhooks) follows the merge to
// the survivor, and from the survivor finds the visitors merged into it.
import type { Store } from '../store/index.js';
import { followMerges, type VisitorDoc } from '../store/visitors.js';

/** Visitors followed through merges at most: a bound on the reads of one history. */
const ALIASES_CAP = 64;

export class VisitorAliases {
  constructor(private readonly store: Store) {}

  /** The account's visitor `visitorId` resolves to (itself, or the visitor it was merged into); null when none. */
  async survivor(accountId: string, visitorId: string): Promise<VisitorDoc | null> {
    const v = await followMerges(visitorId, (id) => this.store.visitors.get(id));
    return v && v.accountId === accountId ? v : null;
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
