// The monthly quota and its usage counters, in the `usage` collection.
//
// Quota: a chain of leases per account and month. Link k
// (`<account>:<YYYY-MM>:L<k>`) records `total`, the units handed out to
// processes after it (a lease adds its size, a return subtracts what a
// process did not use). A process appends link k+1 computed from link k with
// a unique insert: of two processes racing for k+1 one wins, the other reads
// the winner's link and tries k+2. The chain is therefore one line and its
// totals never exceed the plan, on MongoDB and on FerretDB (whose updates are
// not atomic, but whose unique inserts are), whatever the number of processes.
// `<account>:<YYYY-MM>:head` remembers a recent k so a starting process does
// not walk the chain from the beginning (a stale hint only costs reads).
//
// Usage: each process counts the calls it admitted in its own slot document
// (`<account>:<YYYY-MM>:s<n>`, claimed by unique insert), which only it
// updates: exact on both servers. A month's usage is the sum of its slots,
// plus `<account>:<YYYY-MM>` where calls were counted before leases existed.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, upsert } from './errors.js';
import { LeaseChain, type LeaseStore, type Link } from './leaseChain.js';

interface UsageDoc {
  _id: string;
  accountId?: string;
  period?: string;
  /** Link: units handed out after it; head: a recent link number; slot and legacy document: calls counted. */
  total?: number;
  seq?: number;
  count?: number;
  days?: Record<string, number>;
  /** Slot: the process that owns it. */
  owner?: string;
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

/** A month's slots are read one by one up to the first missing; this bounds the walk. */
const MAX_SLOTS = 1_000;

export class UsageRepo implements LeaseStore {
  private readonly col: Collection<UsageDoc>;
  private readonly chain: LeaseChain;

  constructor(db: Db) {
    this.col = db.collection('usage');
    this.chain = new LeaseChain(db.collection('usage'));
  }

  /** Where a process starts on the chain: the hinted link, or before the first (counting the calls of the legacy document). */
  async start(accountId: string, period: string): Promise<Link> {
    const base = `${accountId}:${period}`;
    const [head, legacy] = await Promise.all([this.col.findOne({ _id: `${base}:head` }), this.col.findOne({ _id: base })]);
    if (head?.seq !== undefined) {
      const link = await this.chain.link(accountId, period, head.seq);
      if (link) return link;
    }
    return { seq: -1, total: legacy?.count ?? 0 };
  }

  next(accountId: string, period: string, seq: number): Promise<Link | null> {
    return this.chain.link(accountId, period, seq + 1);
  }

  async append(accountId: string, period: string, after: Link, total: number): Promise<boolean> {
    if (!(await this.chain.append(accountId, period, after, total))) return false;
    // Only a hint: a lost or late update costs a later starter a few reads.
    await upsert(() => this.col.updateOne({ _id: `${accountId}:${period}:head` }, { $max: { seq: after.seq + 1 } }, { upsert: true }));
    return true;
  }

  /** Claims a slot of the month for `owner` (this process); returns its id. */
  async claimSlot(accountId: string, period: string, owner: string): Promise<string> {
    for (let n = 0; n < MAX_SLOTS; n++) {
      const _id = `${accountId}:${period}:s${n}`;
      try {
        await this.col.insertOne({ _id, accountId, period, owner, count: 0, days: {} });
        return _id;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    throw new Error(`usage: more than ${MAX_SLOTS} processes counted ${accountId} in ${period}`);
  }

  /** Adds calls counted by the slot's owner (the only writer of the slot): live calls per day, test calls per day. */
  async count(slot: string, days: Record<string, number>, testDays: Record<string, number>): Promise<void> {
    const sum = (d: Record<string, number>) => Object.values(d).reduce((a, b) => a + b, 0);
    const $inc: Record<string, number> = { count: sum(days), testCount: sum(testDays) };
    for (const [day, k] of Object.entries(days)) $inc[`days.${day}`] = k;
    for (const [day, k] of Object.entries(testDays)) $inc[`testDays.${day}`] = k;
    await this.col.updateOne({ _id: slot }, { $inc });
  }

  async month(accountId: string, period: string): Promise<MonthUsage> {
    const base = `${accountId}:${period}`;
    const docs = [await this.col.findOne({ _id: base })];
    for (let n = 0; n < MAX_SLOTS; n++) {
      const slot = await this.col.findOne({ _id: `${base}:s${n}` });
      if (!slot) break;
      docs.push(slot);
    }
    const days: Record<string, number> = {};
    const testDays: Record<string, number> = {};
    let count = 0;
    let testCount = 0;
    for (const d of docs) {
      count += d?.count ?? 0;
      testCount += d?.testCount ?? 0;
      for (const [day, k] of Object.entries(d?.days ?? {})) if (k) days[day] = (days[day] ?? 0) + k;
      for (const [day, k] of Object.entries(d?.testDays ?? {})) if (k) testDays[day] = (testDays[day] ?? 0) + k;
    }
    return { count, days, testCount, testDays };
  }
}
