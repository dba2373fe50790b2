// Monthly usage counters, one document per account and month:
// `_id` = `<accountId>:<YYYY-MM>`. Counts survive restarts. The same document
// counts per day (`days.<DD>`, UTC) in the same update, so the dashboard's
// chart costs identify no extra write. Months counted before per-day counters
// existed have a `count` larger than the sum of their days.
//
// Exactness: within one process every change of a counter runs under a keyed
// lock, so the quota is never exceeded even on FerretDB (whose updates are
// not atomic). Across several processes on MongoDB the conditional `$inc`
// ({count: {$lt: limit}}) is atomic per document, so the quota still holds
// exactly; on FerretDB with several processes it may be exceeded by up to the
// number of concurrent requests.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './errors.js';
import { KeyedLock } from './keyedLock.js';

interface UsageDoc {
  _id: string;
  accountId: string;
  period: string;
  count: number;
  days?: Record<string, number>;
  /** Identify calls with test keys (never against the quota), and per day. */
  testCount?: number;
  testDays?: Record<string, number>;
}

export interface MonthUsage {
  count: number;
  /** Calls per day of the month (`DD` → count); days without calls are absent. */
  days: Record<string, number>;
  /** Calls with test keys (not counted against the quota), in all and per day. */
  testCount: number;
  testDays: Record<string, number>;
}

export class UsageRepo {
  private readonly col: Collection<UsageDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('usage');
  }

  async month(accountId: string, period: string): Promise<MonthUsage> {
    const doc = await this.col.findOne({ _id: `${accountId}:${period}` });
    return { count: doc?.count ?? 0, days: doc?.days ?? {}, testCount: doc?.testCount ?? 0, testDays: doc?.testDays ?? {} };
  }

  /**
   * Takes one unit of quota, counted on `day` (`DD`) of the period. `ok: false`
   * when the limit was already reached; `count` is the month's count after.
   */
  reserve(accountId: string, period: string, day: string, limit: number): Promise<{ ok: boolean; count: number }> {
    const _id = `${accountId}:${period}`;
    return this.lock.run(_id, async () => {
      const current = (await this.col.findOne({ _id }))?.count ?? 0;
      if (current >= limit) return { ok: false, count: current };
      const filter = { _id, count: { $lt: limit } };
      const $inc = { count: 1, [`days.${day}`]: 1 };
      const inc = { $inc, $setOnInsert: { accountId, period } };
      try {
        const doc = await this.col.findOneAndUpdate(filter, inc, { upsert: true, returnDocument: 'after' });
        return { ok: true, count: doc?.count ?? current + 1 };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // The document exists (another process created it, or it is at the
        // limit and the filter did not match): a plain conditional update decides.
        const doc = await this.col.findOneAndUpdate(filter, { $inc }, { returnDocument: 'after' });
        return doc ? { ok: true, count: doc.count } : { ok: false, count: limit };
      }
    });
  }

  /**
   * Counts (delta 1) or uncounts (-1) a call with a test key on `day`. Test
   * calls never count against the quota; the dashboard shows them apart. The
   * document starts with `count: 0`, so `reserve`'s filter still matches it.
   */
  countTest(accountId: string, period: string, day: string, delta: 1 | -1): Promise<void> {
    const _id = `${accountId}:${period}`;
    return this.lock.run(_id, async () => {
      const $inc = { testCount: delta, [`testDays.${day}`]: delta };
      if (delta < 0) {
        await this.col.updateOne({ _id, testCount: { $gt: 0 } }, { $inc });
        return;
      }
      try {
        await this.col.updateOne({ _id }, { $inc, $setOnInsert: { accountId, period, count: 0 } }, { upsert: true });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        await this.col.updateOne({ _id }, { $inc });
      }
    });
  }

  /** Gives back a unit taken by `reserve` (same period and day) when the request did not succeed after all. */
  release(accountId: string, period: string, day: string): Promise<void> {
    const _id = `${accountId}:${period}`;
    return this.lock.run(_id, async () => {
      await this.col.updateOne({ _id, count: { $gt: 0 } }, { $inc: { count: -1, [`days.${day}`]: -1 } });
    });
  }
}
