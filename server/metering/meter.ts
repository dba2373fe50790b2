// Metering of identify calls (spec 8): the per-second limit for every call,
// and the monthly quota for calls with live keys only. A quota unit is taken
// before the work and given back if the call does not succeed, so only
// successful live calls count and concurrent calls never overshoot; units
// come from blocks this process leases (leases.ts) and are counted per day
// in memory, written at most once a second (usageCounter.ts), with the
// identifications served per project and hour (the dashboard's overview).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../clock.js';
import type { PlanTable } from '../config.js';
import { ApiError } from '../errors.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { HourDoc, MonthUsage } from '../store/usage.js';
import { periodOf, secondsUntilNextPeriod } from './period.js';
import { Leases } from './leases.js';
import { servedOf, UsageCounter } from './usageCounter.js';
import { PerSecondLimiter } from './rateLimiter.js';

export interface Reservation {
  /** Call when the request failed after admission: the unit is returned. */
  release(): Promise<void>;
}

/** The headers of a 429 from a plan limit: when to retry, and the limit that was hit (none of it is left). */
function rateLimitHeaders(limit: number, retryAfterS: number): Record<string, string> {
  return { 'Retry-After': String(retryAfterS), 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(retryAfterS) };
}

/**
 * Where admit() leaves the X-RateLimit-* headers of an admitted call: the
 * identify route runs the call inside `admission.run(slot, …)` and sends
 * what the slot holds (the 429s carry theirs on the error).
 */
export const admission = new AsyncLocalStorage<{ headers?: Record<string, string> }>();

function admittedHeaders(limit: number, used: number, resetS: number): Record<string, string> {
  return { 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': String(Math.max(0, limit - used)), 'X-RateLimit-Reset': String(resetS) };
}

export class Meter {
  private readonly perSecond = new PerSecondLimiter();
  /** With several processes, the per-second limit comes from leases shared through the database. */
  private readonly sharedPerSecond: Leases | null;
  private readonly quota: Leases;
  private readonly usage: UsageCounter;

  constructor(
    private readonly store: Store,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
    processes = 1,
  ) {
    this.quota = new Leases(store.usage, clock, periodOf);
    this.sharedPerSecond = processes > 1 ? new Leases(store.rate, clock, (ms) => `s${Math.floor(ms / 1000)}`) : null;
    this.usage = new UsageCounter(store.usage, clock);
  }

  /** Admits one identify call or throws the 429 of the limit it hits. */
  async admit(key: ApiKeyDoc): Promise<Reservation> {
    const account = await this.store.accounts.account(key.accountId);
    const limits = this.plans[account?.plan ?? 'free'];
    const now = this.clock.now();

    const second = this.sharedPerSecond ? await this.sharedPerSecond.take(key.accountId, limits.rps) : this.perSecond.hit(key.accountId, limits.rps, now);
    if (!second.ok) {
      throw new ApiError('rate_limit_exceeded', undefined, { usage: second.count, limit: limits.rps }, rateLimitHeaders(limits.rps, 1));
    }
    const slot = admission.getStore();
    if (key.type === 'test') {
      // Shown apart in the dashboard's chart; never against the quota. Its headers tell the per-second limit.
      if (slot) slot.headers = admittedHeaders(limits.rps, 'count' in second ? second.count : second.used, 1);
      const uncount = this.usage.count(key.accountId, true);
      return { release: async () => uncount() };
    }
    const month = await this.quota.take(key.accountId, limits.monthly);
    if (!month.ok) {
      throw new ApiError(
        'monthly_quota_exceeded',
        undefined,
        { usage: month.count, limit: limits.monthly },
        rateLimitHeaders(limits.monthly, secondsUntilNextPeriod(now)),
      );
    }
    // A live key's headers tell the monthly quota (what runs out).
    if (slot) slot.headers = admittedHeaders(limits.monthly, month.used, secondsUntilNextPeriod(now));
    const uncount = this.usage.count(key.accountId, false);
    return {
      release: async () => {
        month.release();
        uncount();
      },
    };
  }

  /** A month's usage, exact up to this process's last call. */
  month(accountId: string, period: string): Promise<MonthUsage> {
    return this.usage.month(accountId, period);
  }

  /** Counts an identification served (its event stored), for its project's hourly counts (in memory; written with the usage). */
  served(event: EventDoc): void {
    this.usage.served(servedOf(event));
  }

  /** A project's hourly counts of these days (`YYYY-MM-DD`), exact up to this process's last identification. */
  hourly(projectId: string, firstDay: string, lastDay: string): Promise<{ day: string; hours: Record<string, HourDoc> }[]> {
    return this.usage.hourly(projectId, firstDay, lastDay);
  }

  /** Writes what is counted and gives unused quota back (on shutdown). */
  async close(): Promise<void> {
    await Promise.all([this.usage.flush(), this.quota.close()]);
  }
}
