// Attempt limits that hold under concurrency, on FerretDB as on MongoDB and
// across processes: each window of a key has `max` numbered slots, and an
// attempt must claim one by a unique insert (`_id` = key|window|n) before
// it does anything. A unique insert is atomic on both servers, so N
// simultaneous attempts never get more than `max` slots, however they
// interleave. (A read-then-write counter lets every attempt that reads
// before the first write through.)
//
// Windows are fixed (`floor(now / windowMs)`); slots expire with their
// window and are deleted by the periodic sweep.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './errors.js';

export interface Limit {
  /** What is counted, e.g. `signin:ip:192.0.2.7`. */
  key: string;
  max: number;
  windowMs: number;
}

export interface Slot {
  _id: string;
  expiresAt: Date;
}

export type TakeResult = { ok: true; slots: Slot[] } | { ok: false; limit: Limit; retryAfterMs: number };

export class AttemptsRepo {
  private readonly col: Collection<Slot>;

  constructor(db: Db) {
    this.col = db.collection('attemptSlots');
  }

  /** Claims one slot of `limit` in the window of `now`; null when all are taken. */
  async take(limit: Limit, now: Date): Promise<Slot | null> {
    const window = Math.floor(now.getTime() / limit.windowMs);
    const expiresAt = new Date((window + 1) * limit.windowMs);
    const id = (n: number) => `${limit.key}|${window}|${n}`;
    // Slots fill from 0, so a taken last slot means "full": one read instead
    // of `max` failed inserts per refused attempt. A slot given back below it
    // stays unused until the window ends: refusing more, never admitting more.
    if (await this.col.findOne({ _id: id(limit.max - 1) })) return null;
    for (let n = 0; n < limit.max; n++) {
      try {
        const slot = { _id: id(n), expiresAt };
        await this.col.insertOne(slot);
        return slot;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    return null;
  }

  /**
   * Claims a slot of every limit, or none: when one is full, the slots
   * already claimed are given back and the answer names the full limit.
   */
  async takeAll(limits: readonly Limit[], now: Date): Promise<TakeResult> {
    const slots: Slot[] = [];
    for (const limit of limits) {
      const slot = await this.take(limit, now);
      if (!slot) {
        await this.release(slots);
        const windowEnd = (Math.floor(now.getTime() / limit.windowMs) + 1) * limit.windowMs;
        return { ok: false, limit, retryAfterMs: windowEnd - now.getTime() };
      }
      slots.push(slot);
    }
    return { ok: true, slots };
  }

  /** Gives slots back (an attempt that turned out not to count). */
  async release(slots: readonly Slot[]): Promise<void> {
    await Promise.all(slots.map((s) => this.col.deleteOne({ _id: s._id })));
  }

  async deleteExpired(now: Date): Promise<number> {
    return (await this.col.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }
}
