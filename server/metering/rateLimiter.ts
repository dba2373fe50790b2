// Per-second limit per account, across all of its keys: a fixed one-second
// window counted in this process's memory (bursts are what it guards against;
// with N processes behind a balancer the effective limit is up to N × rps).
export class PerSecondLimiter {
  private readonly windows = new Map<string, { second: number; count: number }>();

  /** Counts the request; `ok: false` once the account is over `limit` this second. */
  hit(accountId: string, limit: number, nowMs: number): { ok: boolean; count: number } {
    const second = Math.floor(nowMs / 1000);
    let w = this.windows.get(accountId);
    if (!w || w.second !== second) {
      w = { second, count: 0 };
      this.windows.set(accountId, w);
      this.sweep(second);
    }
    w.count++;
    return { ok: w.count <= limit, count: w.count };
  }

  /** Drops idle accounts' windows so the map does not grow without bound. */
  private sweep(second: number): void {
    if (this.windows.size < 10_000) return;
    for (const [k, v] of this.windows) if (v.second < second) this.windows.delete(k);
  }
}
