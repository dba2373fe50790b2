// Usage per day without a database write per call: this process counts the
// calls it admitted in memory and adds them to its own usage slot
// (server/store/usage.ts) at most once a FLUSH_MS, and on close. Only this
// process writes its slot, so the counts are exact on MongoDB and FerretDB
// whatever the number of processes; a process that dies loses at most
// FLUSH_MS of counting.
import { ulid } from '../ids.js';
import type { Clock } from '../clock.js';
import { KeyedLock } from '../store/keyedLock.js';
import type { MonthUsage, UsageRepo } from '../store/usage.js';
import { dayOf, periodOf } from './period.js';

/** How long admitted calls may wait in memory before they are written. */
export const FLUSH_MS = 1_000;

interface Pending {
  accountId: string;
  period: string;
  /** Calls not yet written, per day: with live keys and with test keys. */
  live: Record<string, number>;
  test: Record<string, number>;
  slot: string | null;
}

const add = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [day, n] of Object.entries(from)) into[day] = (into[day] ?? 0) + n;
};
const nonZero = (d: Record<string, number>) => Object.fromEntries(Object.entries(d).filter(([, n]) => n !== 0));

export class UsageCounter {
  /** This process, as the owner of its usage slots. */
  private readonly owner = ulid();
  private readonly months = new Map<string, Pending>();
  private readonly lock = new KeyedLock();
  private lastFlush = 0;

  constructor(
    private readonly usage: UsageRepo,
    private readonly clock: Clock,
  ) {}

  /** Counts an admitted call (test keys apart); the returned function uncounts it. */
  count(accountId: string, test: boolean): () => void {
    const now = this.clock.now();
    const period = periodOf(now);
    const key = `${accountId}:${period}`;
    const m = this.months.get(key) ?? { accountId, period, live: {}, test: {}, slot: null };
    this.months.set(key, m);
    const day = dayOf(now);
    const counts = () => (test ? m.test : m.live);
    counts()[day] = (counts()[day] ?? 0) + 1;
    if (now - this.lastFlush >= FLUSH_MS) void this.flush().catch(() => {});
    return () => {
      counts()[day] = (counts()[day] ?? 0) - 1;
    };
  }

  /** A month's usage, with this process's pending calls written first. */
  async month(accountId: string, period: string): Promise<MonthUsage> {
    await this.flush();
    return this.usage.month(accountId, period);
  }

  /** Writes every month's pending calls to this process's slots. */
  async flush(): Promise<void> {
    this.lastFlush = this.clock.now();
    const current = periodOf(this.lastFlush);
    await Promise.all(
      [...this.months.entries()].map(([key, m]) =>
        this.lock.run(key, async () => {
          const [live, test] = [nonZero(m.live), nonZero(m.test)];
          m.live = {};
          m.test = {};
          if (Object.keys(live).length || Object.keys(test).length) {
            try {
              m.slot ??= await this.usage.claimSlot(m.accountId, m.period, this.owner);
              await this.usage.count(m.slot, live, test);
            } catch (err) {
              add(m.live, live);
              add(m.test, test);
              throw err;
            }
          }
          // A past month gets no more calls.
          if (m.period !== current && !Object.keys(m.live).length && !Object.keys(m.test).length) this.months.delete(key);
        }),
      ),
    );
  }
}
