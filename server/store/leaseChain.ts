// A chain of leases (see usage.ts): link k+1 of a chain is computed from link
// k and appended by a unique insert, so the chain is one line and its totals
// are exact on MongoDB and FerretDB whatever the number of processes.
// `_id` = `<account>:<period>:L<k>`.
import type { Collection } from 'mongodb';
import { isDuplicateKey } from './errors.js';

/** The newest link a process knows: its number (-1: none yet) and its total. */
export interface Link {
  seq: number;
  total: number;
}

/** What a lessee needs of a chain's store (metering/leases.ts). */
export interface LeaseStore {
  /** Where a process starts on the chain. */
  start(accountId: string, period: string): Promise<Link>;
  /** The link after `seq`, if one exists. */
  next(accountId: string, period: string, seq: number): Promise<Link | null>;
  /** Appends the link after `after` with `total`; false when another process appended it first. */
  append(accountId: string, period: string, after: Link, total: number): Promise<boolean>;
}

interface LinkDoc {
  _id: string;
  total?: number;
  accountId?: string;
  period?: string;
  at?: Date;
}

export class LeaseChain {
  constructor(private readonly col: Collection<LinkDoc>) {}

  async link(accountId: string, period: string, seq: number): Promise<Link | null> {
    const doc = await this.col.findOne({ _id: `${accountId}:${period}:L${seq}` });
    return doc?.total === undefined ? null : { seq, total: doc.total };
  }

  async append(accountId: string, period: string, after: Link, total: number, at?: Date): Promise<boolean> {
    try {
      await this.col.insertOne({ _id: `${accountId}:${period}:L${after.seq + 1}`, accountId, period, total, ...(at ? { at } : {}) });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }
}
