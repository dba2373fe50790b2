// A small read-through cache for documents that identify reads on every call
// and that change rarely (API keys, projects, accounts). Entries live at most
// `ttlMs`: a change made by another process is seen within that bound; the
// process that makes a change updates or drops its entry at once. Bounded:
// beyond `cap` entries the oldest inserted goes first.
export interface CacheOptions {
  ttlMs: number;
  now: () => number;
}

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  /** Bumped by every delete: a load that started before one does not store its possibly stale result. */
  private epoch = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly cap = 10_000,
  ) {}

  /** The cached value, or the loader's (cached unless null: absent documents may appear at any time). */
  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit && hit.until > this.now()) return hit.value;
    const epoch = this.epoch;
    const value = await load();
    if (value !== null && epoch === this.epoch) this.keep(key, value);
    return value;
  }

  private keep(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
    if (this.entries.size > this.cap) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.epoch++;
    this.entries.delete(key);
  }
}
