// A limit without a database write per call, exact across processes: this
// process leases a block of a period's remaining units (one unique insert on
// the period's lease chain, server/store/leaseChain.ts) and spends it in
// memory. Blocks are sized from the account's recent rate and shrink as the
// period's remaining units do, so that other processes are not starved near
// the limit; close() gives unused units back. A process that dies keeps its
// unused units: the limit is never exceeded, the account loses at most one
// block per process. The monthly quota leases per month; with WORKERS > 1 the
// per-second limit leases per second.
import type { Clock } from '../clock.js';
import { KeyedLock } from '../store/keyedLock.js';
import type { LeaseStore, Link } from '../store/leaseChain.js';

/** A block lasts about this long at the account's recent rate. */
const BLOCK_SECONDS = 2;
const MAX_BLOCK = 1_000;
/** A block takes at most this share of what is left of the period. */
const SHARE_OF_REMAINING = 1 / 8;

interface Period {
  accountId: string;
  period: string;
  /** The newest link of the chain this process knows. */
  link: Link | null;
  /** Units leased and not spent. */
  available: number;
  leasedAt: number;
  spentSinceLease: number;
  lastBlock: number;
}

/**
 * `used`: the period's units handed out as far as this process knows, less
 * its own unspent ones (other processes' unspent blocks count as used, so
 * `limit - used` never overstates what is left).
 */
export type Take = { ok: true; used: number; release(): void } | { ok: false; count: number };

export class Leases {
  /** Each account's current period (an older one is dropped: its units cannot be spent any more). */
  private readonly periods = new Map<string, Period>();
  private readonly lock = new KeyedLock();

  constructor(
    private readonly chain: LeaseStore,
    private readonly clock: Clock,
    private readonly periodOf: (ms: number) => string,
  ) {}

  /** Takes one unit of the account's current period; `ok: false` with the units handed out when `limit` is reached. */
  async take(accountId: string, limit: number): Promise<Take> {
    const now = this.clock.now();
    const p = this.current(accountId, now);
    while (p.available <= 0) {
      const refused = await this.lock.run(`${accountId}:${p.period}`, () => (p.available > 0 ? Promise.resolve(null) : this.lease(p, limit, now)));
      if (refused !== null) return { ok: false, count: refused };
    }
    p.available--;
    p.spentSinceLease++;
    return {
      ok: true,
      used: (p.link?.total ?? 0) - p.available,
      release: () => {
        p.available++;
        p.spentSinceLease--;
      },
    };
  }

  /** On shutdown: unused units given back to their chains. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.periods.values()].map((p) =>
        this.lock.run(`${p.accountId}:${p.period}`, async () => {
          while (p.available > 0 && p.link) {
            if (await this.chain.append(p.accountId, p.period, p.link, p.link.total - p.available)) {
              p.available = 0;
              return;
            }
            p.link = (await this.chain.next(p.accountId, p.period, p.link.seq)) ?? p.link;
          }
        }),
      ),
    );
  }

  private current(accountId: string, now: number): Period {
    const period = this.periodOf(now);
    const known = this.periods.get(accountId);
    if (known?.period === period) return known;
    const p: Period = { accountId, period, link: null, available: 0, leasedAt: now, spentSinceLease: 0, lastBlock: 0 };
    this.periods.set(accountId, p);
    return p;
  }

  /** Leases a block onto `p.available`; null when done, else the period's units handed out (the limit is used up). */
  private async lease(p: Period, limit: number, now: number): Promise<number | null> {
    p.link ??= await this.chain.start(p.accountId, p.period);
    for (;;) {
      const remaining = limit - p.link.total;
      if (remaining <= 0) {
        // Another process may have given units back since.
        const next = await this.chain.next(p.accountId, p.period, p.link.seq);
        if (!next) return p.link.total;
        p.link = next;
        continue;
      }
      const size = this.blockSize(p, remaining, now);
      if (await this.chain.append(p.accountId, p.period, p.link, p.link.total + size)) {
        p.link = { seq: p.link.seq + 1, total: p.link.total + size };
        p.available += size;
        p.leasedAt = now;
        p.spentSinceLease = 0;
        p.lastBlock = size;
        return null;
      }
      p.link = (await this.chain.next(p.accountId, p.period, p.link.seq)) ?? p.link;
    }
  }

  /** Enough for BLOCK_SECONDS at the rate of the last block, at least twice the last if it went faster; never more than a share of what is left. */
  private blockSize(p: Period, remaining: number, now: number): number {
    const seconds = Math.max(0.001, (now - p.leasedAt) / 1000);
    const atRate = Math.ceil((p.spentSinceLease / seconds) * BLOCK_SECONDS);
    const wanted = Math.min(MAX_BLOCK, Math.max(1, atRate, seconds < BLOCK_SECONDS ? p.lastBlock * 2 : 1));
    return Math.max(1, Math.min(wanted, Math.floor(remaining * SHARE_OF_REMAINING)));
  }
}
