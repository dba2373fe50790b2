// Per-second limits shared by several processes (WORKERS > 1): one lease
// chain per account and second (leaseChain.ts) in the `rate` collection,
// swept once its second is long past.
import type { Collection, Db } from 'mongodb';
import { LeaseChain, type LeaseStore, type Link } from './leaseChain.js';

interface RateDoc {
  _id: string;
  at: Date;
}

export class RateRepo implements LeaseStore {
  private readonly col: Collection<RateDoc>;
  private readonly chain: LeaseChain;

  constructor(db: Db) {
    this.col = db.collection('rate');
    this.chain = new LeaseChain(db.collection('rate'));
  }

  /** A second's chain starts empty: nothing to read. */
  async start(): Promise<Link> {
    return { seq: -1, total: 0 };
  }

  next(accountId: string, period: string, seq: number): Promise<Link | null> {
    return this.chain.link(accountId, period, seq + 1);
  }

  /** `period` is `s<Unix seconds>`: its links are dated by it, for the sweep. */
  append(accountId: string, period: string, after: Link, total: number): Promise<boolean> {
    return this.chain.append(accountId, period, after, total, new Date(Number(period.slice(1)) * 1000));
  }

  /** Deletes the links of seconds before `before`. */
  async sweep(before: Date): Promise<number> {
    return (await this.col.deleteMany({ at: { $lt: before } })).deletedCount;
  }
}
