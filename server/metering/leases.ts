// Limits without a database write per call, exact across processes. For the
// monthly quota (and, with WORKERS > 1, the per-second limit) this process leases
// a block of the month's remaining units (one unique insert on the lease
// chain, server/store/usage.ts), spends it in memory, and counts what it
// admitted in its own usage slot, written at most once a FLUSH_MS. Blocks are
// sized from the account's recent rate and shrink as the month's remaining
// units do, so that other processes are not starved near the limit; unused
// units go back to the chain on close(). A process that dies keeps its
// unused units (the plan is never exceeded; the account loses at most one
// block per process) and loses at most FLUSH_MS of counting. Per-second
// chains are not counted (usage is the month's) and start afresh each second.
import { ulid } from 'ulid';
import type { Clock } from '../clock.js';
import { KeyedLock } from '../store/keyedLock.js';
import type { LeaseStore, Link } from '../store/leaseChain.js';
import type { MonthUsage, UsageRepo } from '../store/usage.js';
import { dayOf, periodOf } from './period.js';

/** How long admitted calls may wait in memory before they are written to the slot. */
export const FLUSH_MS = 1_000;
/** A block lasts about this long at the account's recent rate. */
const BLOCK_SECONDS = 2;
const MAX_BLOCK = 1_000;
/** A block takes at most this share of what is left of the month. */
const SHARE_OF_REMAINING = 1 / 8;

interface MonthState {
  accountId: string;
  period: string;
  /** The newest link of the chain this process knows. */
  link: Link | null;
  /** Units leased and not spent. */
  available: number;
  /** Admitted calls not yet written to the slot, per day: live and test keys. */
  pending: Record<string, number>;
  pendingTest: Record<string, number>;
  slot: string | null;
  leasedAt: number;
  spentSinceLease: number;
  lastBlock: number;
}

export type Take = { ok: true; release(): void } | { ok: false; count: number };

export class Leases {
  /** This process, as the owner of its usage slots. */
  private readonly owner = ulid();
  private readonly months = new Map<string, MonthState>();
  private readonly lock = new KeyedLock();
  private lastFlush = 0;

  /** Per second: the account's current state (older seconds are dropped). */
  private readonly currentSecond = new Map<string, string>();

  /** The monthly quota, counted in `usage`. */
  static monthly(usage: UsageRepo, clock: Clock): Leases {
    return new Leases(usage, clock, usage);
  }

  /** A per-second limit shared by processes (not counted). */
  static perSecond(rate: LeaseStore, clock: Clock): Leases {
    return new Leases(rate, clock, null);
  }

  private constructor(
    private readonly chain: LeaseStore,
    private readonly clock: Clock,
    private readonly usage: UsageRepo | null,
  ) {}

  /** Takes one unit of the account's month; `ok: false` with the units handed out when the plan's `limit` is reached. */
  async take(accountId: string, limit: number): Promise<Take> {
    const now = this.clock.now();
    const period = this.usage ? periodOf(now) : `s${Math.floor(now / 1000)}`;
    const key = `${accountId}:${period}`;
    const m = this.months.get(key) ?? this.stateFor(key, accountId, period, now);
    if (m.available <= 0) {
      const lease = await this.lock.run(key, () => (m.available > 0 ? Promise.resolve(null) : this.lease(m, limit, now)));
      if (lease !== null) return { ok: false, count: lease };
    }
    if (m.available <= 0) return this.take(accountId, limit);
    m.available--;
    m.spentSinceLease++;
    if (!this.usage) return { ok: true, release: () => void m.available++ };
    const day = dayOf(now);
    m.pending[day] = (m.pending[day] ?? 0) + 1;
    if (now - this.lastFlush >= FLUSH_MS) void this.flush().catch(() => {});
    return {
      ok: true,
      release: () => {
        m.available++;
        m.spentSinceLease--;
        m.pending[day] = (m.pending[day] ?? 0) - 1;
      },
    };
  }

  /** Counts a call with a test key (shown apart, never against the quota); the returned function uncounts it. */
  countTest(accountId: string): () => void {
    const now = this.clock.now();
    const period = periodOf(now);
    const key = `${accountId}:${period}`;
    const m = this.months.get(key) ?? this.stateFor(key, accountId, period, now);
    const day = dayOf(now);
    m.pendingTest[day] = (m.pendingTest[day] ?? 0) + 1;
    if (now - this.lastFlush >= FLUSH_MS) void this.flush().catch(() => {});
    return () => {
      m.pendingTest[day] = (m.pendingTest[day] ?? 0) - 1;
    };
  }

  /** The month's usage, with this process's pending calls written first. */
  async month(accountId: string, period: string): Promise<MonthUsage> {
    await this.flush();
    return this.usage!.month(accountId, period);
  }

  /** Writes every month's pending calls to this process's slots. */
  async flush(): Promise<void> {
    const usage = this.usage;
    if (!usage) return;
    this.lastFlush = this.clock.now();
    const current = periodOf(this.lastFlush);
    await Promise.all(
      [...this.months.entries()].map(([key, m]) =>
        this.lock.run(`${key}:flush`, async () => {
          const nonZero = (d: Record<string, number>) => Object.fromEntries(Object.entries(d).filter(([, n]) => n !== 0));
          const [pending, pendingTest] = [nonZero(m.pending), nonZero(m.pendingTest)];
          m.pending = {};
          m.pendingTest = {};
          if (Object.keys(pending).length || Object.keys(pendingTest).length) {
            try {
              m.slot ??= await usage.claimSlot(m.accountId, m.period, this.owner);
              await usage.count(m.slot, pending, pendingTest);
            } catch (err) {
              for (const [day, n] of Object.entries(pending)) m.pending[day] = (m.pending[day] ?? 0) + n;
              for (const [day, n] of Object.entries(pendingTest)) m.pendingTest[day] = (m.pendingTest[day] ?? 0) + n;
              throw err;
            }
          }
          // A past month has nothing left to spend.
          if (m.period !== current && !Object.keys(m.pending).length && !Object.keys(m.pendingTest).length) this.months.delete(key);
        }),
      ),
    );
  }

  /** On shutdown: counts written, unused units given back to the chain. */
  async close(): Promise<void> {
    if (!this.usage) return;
    await this.flush();
    await Promise.all(
      [...this.months.entries()].map(([key, m]) =>
        this.lock.run(key, async () => {
          while (m.available > 0 && m.link) {
            if (await this.chain.append(m.accountId, m.period, m.link, m.link.total - m.available)) {
              m.available = 0;
              return;
            }
            m.link = (await this.chain.next(m.accountId, m.period, m.link.seq)) ?? m.link;
          }
        }),
      ),
    );
  }

  private stateFor(key: string, accountId: string, period: string, now: number): MonthState {
    const m: MonthState = { accountId, period, link: null, available: 0, pending: {}, pendingTest: {}, slot: null, leasedAt: now, spentSinceLease: 0, lastBlock: 0 };
    this.months.set(key, m);
    if (!this.usage) {
      const previous = this.currentSecond.get(accountId);
      if (previous) this.months.delete(previous);
      this.currentSecond.set(accountId, key);
    }
    return m;
  }

  /** Leases a block onto `m.available`; null when done, else the month's units handed out (the plan is used up). */
  private async lease(m: MonthState, limit: number, now: number): Promise<number | null> {
    m.link ??= await this.chain.start(m.accountId, m.period);
    for (;;) {
      const remaining = limit - m.link.total;
      if (remaining <= 0) {
        // Another process may have given units back since.
        const next = await this.chain.next(m.accountId, m.period, m.link.seq);
        if (!next) return m.link.total;
        m.link = next;
        continue;
      }
      const size = this.blockSize(m, remaining, now);
      if (await this.chain.append(m.accountId, m.period, m.link, m.link.total + size)) {
        m.link = { seq: m.link.seq + 1, total: m.link.total + size };
        m.available += size;
        m.leasedAt = now;
        m.spentSinceLease = 0;
        m.lastBlock = size;
        return null;
      }
      m.link = (await this.chain.next(m.accountId, m.period, m.link.seq)) ?? m.link;
    }
  }

  /** Enough for BLOCK_SECONDS at the rate of the last block, at least twice the last if it went faster; never more than a share of what is left. */
  private blockSize(m: MonthState, remaining: number, now: number): number {
    const seconds = Math.max(0.001, (now - m.leasedAt) / 1000);
    const atRate = Math.ceil((m.spentSinceLease / seconds) * BLOCK_SECONDS);
    const wanted = Math.min(MAX_BLOCK, Math.max(1, atRate, seconds < BLOCK_SECONDS ? m.lastBlock * 2 : 1));
    return Math.max(1, Math.min(wanted, Math.floor(remaining * SHARE_OF_REMAINING)));
  }
}
