// Failed sign-in counters per email and per IP, in fixed windows, so brute
// force is slowed across restarts and processes. `_id` = `email:<e>` / `ip:<a>`.
import type { Collection, Db } from 'mongodb';
import { upsert } from './errors.js';
import { KeyedLock } from './keyedLock.js';

interface FailureDoc {
  _id: string;
  count: number;
  windowStart: Date;
}

export class LoginThrottleRepo {
  private readonly col: Collection<FailureDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('loginFailures');
  }

  /** Failures recorded in the window that contains `now`. */
  async failures(key: string, now: Date, windowMs: number): Promise<{ count: number; windowStart: Date }> {
    const doc = await this.col.findOne({ _id: key });
    if (!doc || now.getTime() - doc.windowStart.getTime() >= windowMs) return { count: 0, windowStart: now };
    return { count: doc.count, windowStart: doc.windowStart };
  }

  recordFailure(key: string, now: Date, windowMs: number): Promise<void> {
    return this.lock.run(key, async () => {
      const doc = await this.col.findOne({ _id: key });
      if (!doc || now.getTime() - doc.windowStart.getTime() >= windowMs) {
        await upsert(() => this.col.replaceOne({ _id: key }, { count: 1, windowStart: now }, { upsert: true }));
      } else {
        await this.col.updateOne({ _id: key }, { $inc: { count: 1 } });
      }
    });
  }

  async deleteOlderThan(cutoff: Date): Promise<number> {
    return (await this.col.deleteMany({ windowStart: { $lt: cutoff } })).deletedCount;
  }

  async clear(key: string): Promise<void> {
    await this.col.deleteOne({ _id: key });
  }
}
