// Metering of identify calls (spec 8): the per-second limit for every call,
// and the monthly quota for calls with live keys only. A quota unit is taken
// before the work and given back if the call does not succeed, so only
// successful live calls count and concurrent calls never overshoot.
import type { Clock } from '../clock.js';
import type { PlanTable } from '../config.js';
import { ApiError } from '../errors.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { Store } from '../store/index.js';
import { dayOf, periodOf, secondsUntilNextPeriod } from './period.js';
import { PerSecondLimiter } from './rateLimiter.js';

export interface Reservation {
  /** Call when the request failed after admission: the unit is returned. */
  release(): Promise<void>;
}

const NOTHING_TO_RELEASE: Reservation = { release: async () => {} };

/** The headers of a 429 from a plan limit: when to retry, and the limit that was hit (none of it is left). */
function rateLimitHeaders(limit: number, retryAfterS: number): Record<string, string> {
  return { 'Retry-After': String(retryAfterS), 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(retryAfterS) };
}

export class Meter {
  private readonly perSecond = new PerSecondLimiter();

  constructor(
    private readonly store: Store,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
  ) {}

  /** Admits one identify call or throws the 429 of the limit it hits. */
  async admit(key: ApiKeyDoc): Promise<Reservation> {
    const account = await this.store.accounts.account(key.accountId);
    const limits = this.plans[account?.plan ?? 'free'];
    const now = this.clock.now();

    const second = this.perSecond.hit(key.accountId, limits.rps, now);
    if (!second.ok) {
      throw new ApiError(429, 'Rate limit exceeded', { usage: second.count, limit: limits.rps }, rateLimitHeaders(limits.rps, 1));
    }
    const period = periodOf(now);
    const day = dayOf(now);
    if (key.type === 'test') {
      // Shown apart in the dashboard's chart; never against the quota.
      await this.store.usage.countTest(key.accountId, period, day, 1);
      return { release: () => this.store.usage.countTest(key.accountId, period, day, -1) };
    }
    if (key.type !== 'live') return NOTHING_TO_RELEASE;

    const month = await this.store.usage.reserve(key.accountId, period, day, limits.monthly);
    if (!month.ok) {
      throw new ApiError(
        429,
        'Monthly API call limit exceeded',
        { usage: month.count, limit: limits.monthly },
        rateLimitHeaders(limits.monthly, secondsUntilNextPeriod(now)),
      );
    }
    return { release: () => this.store.usage.release(key.accountId, period, day) };
  }
}
