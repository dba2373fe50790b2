// Whether proxied traffic arrives, without a database write per call: this
// process counts identify calls per project and UTC hour in memory (all, and
// those that came through a proxy), keeps the last error a proxy met, and
// adds both to server/store/proxyStats.ts at most once a FLUSH_MS, before the
// dashboard reads them, and on close.
import type { Clock } from '../clock.js';
import type { HourCounts, ProxyErrorDoc, ProxyStatsRepo } from '../store/proxyStats.js';

/** How long counted calls may wait in memory before they are written. */
export const FLUSH_MS = 5_000;

const HOUR = 3_600_000;
export const hourOf = (t: number) => t - (t % HOUR);

export class ProxyTraffic {
  private counts = new Map<string, Map<number, HourCounts>>();
  private errors = new Map<string, ProxyErrorDoc>();
  private lastFlush: number;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly stats: ProxyStatsRepo,
    private readonly clock: Clock,
  ) {
    this.lastFlush = clock.now();
  }

  /** A successful identify call of the project, proxied or not. */
  count(projectId: string, proxied: boolean): void {
    const now = this.clock.now();
    const hours = this.counts.get(projectId) ?? new Map<number, HourCounts>();
    this.counts.set(projectId, hours);
    const c = hours.get(hourOf(now)) ?? { identify: 0, proxied: 0 };
    hours.set(hourOf(now), c);
    c.identify++;
    if (proxied) c.proxied++;
    this.maybeFlush(now);
  }

  /** The latest error a proxy of the project met (the newest wins). */
  error(projectId: string, error: ProxyErrorDoc): void {
    const prior = this.errors.get(projectId);
    if (!prior || prior.at <= error.at) this.errors.set(projectId, error);
    this.maybeFlush(this.clock.now());
  }

  private maybeFlush(now: number): void {
    if (now - this.lastFlush >= FLUSH_MS) void this.flush().catch(() => {});
  }

  /** Writes what is counted (one command); what fails to be written is kept for the next flush. */
  flush(): Promise<void> {
    // One flush at a time; a failed one does not stop the next.
    this.flushing = this.flushing
      .catch(() => {})
      .then(async () => {
        this.lastFlush = this.clock.now();
        const [counts, errors] = [this.counts, this.errors];
        if (!counts.size && !errors.size) return;
        this.counts = new Map();
        this.errors = new Map();
        try {
          await this.stats.add(counts, errors);
        } catch (err) {
          for (const [projectId, hours] of counts) {
            for (const [t, c] of hours) {
              const mine = this.counts.get(projectId) ?? new Map<number, HourCounts>();
              this.counts.set(projectId, mine);
              const m = mine.get(t) ?? { identify: 0, proxied: 0 };
              mine.set(t, { identify: m.identify + c.identify, proxied: m.proxied + c.proxied });
            }
          }
          for (const [projectId, e] of errors) if (!this.errors.has(projectId)) this.errors.set(projectId, e);
          throw err;
        }
      });
    return this.flushing;
  }
}
