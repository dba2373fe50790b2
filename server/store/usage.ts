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
//
// Hourly counts of a project's identifications (the dashboard's overview):
// each process adds its own to `h|<projectId>|<YYYY-MM-DD>|<process>`, one
// document per UTC day with a field per hour (`h13`), written in the same
// command as its usage slot; only that process writes it, so exact on both
// servers too. A window's hours are one `_id` range. Swept once older than
// the longest window served.
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
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
  /** Hourly document: the day's start (Unix ms); beside it, per hour, `h00`…`h23`: a HourDoc. */
  t?: number;
}

/** One hour of a project's identifications as stored: all, bots, suspects, and bots by category (good, bad). */
export interface HourDoc {
  n?: number;
  bots?: number;
  suspects?: number;
  good?: Record<string, number>;
  bad?: Record<string, number>;
}

/** Increments of one process's hourly document: `h<HH>.<count>` → how many more. */
export type HourIncrements = Record<string, number>;

const DAY_MS = 24 * 3_600_000;
/** The UTC day of a time, `YYYY-MM-DD`. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const hourlyId = (projectId: string, day: string, owner: string) => `h|${projectId}|${day}|${owner}`;
/** Every hourly document: `h|` … `h}` ('}' follows '|'). */
const HOURLY = { $gt: 'h|', $lt: 'h}' };

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

  /**
   * Adds what `owner` (this process) counted, in one command: calls to its
   * slot (live and test, per day; none: no slot), and identifications to its
   * hourly documents (per `<projectId>|<YYYY-MM-DD>`).
   */
  async count(
    owner: string,
    slot: string | null,
    days: Record<string, number>,
    testDays: Record<string, number>,
    hours: ReadonlyMap<string, HourIncrements>,
  ): Promise<void> {
    const ops: AnyBulkWriteOperation<UsageDoc>[] = [];
    if (slot !== null) {
      const sum = (d: Record<string, number>) => Object.values(d).reduce((a, b) => a + b, 0);
      const $inc: Record<string, number> = { count: sum(days), testCount: sum(testDays) };
      for (const [day, k] of Object.entries(days)) $inc[`days.${day}`] = k;
      for (const [day, k] of Object.entries(testDays)) $inc[`testDays.${day}`] = k;
      ops.push({ updateOne: { filter: { _id: slot }, update: { $inc } } });
    }
    for (const [key, $inc] of hours) {
      const [projectId, day] = key.split('|') as [string, string];
      const filter = { _id: hourlyId(projectId, day, owner) };
      ops.push({ updateOne: { filter, update: { $inc, $setOnInsert: { t: Date.parse(day) } }, upsert: true } });
    }
    if (ops.length) await this.col.bulkWrite(ops, { ordered: false });
  }

  /** A project's hourly documents of the days from `firstDay` to `lastDay` (`YYYY-MM-DD`), every process's: one range read. */
  async hourly(projectId: string, firstDay: string, lastDay: string): Promise<{ day: string; hours: Record<string, HourDoc> }[]> {
    const docs = await this.col.find({ _id: { $gte: `h|${projectId}|${firstDay}|`, $lt: `h|${projectId}|${lastDay}|~` } }).toArray();
    return docs.map((d) => ({
      day: d._id.split('|')[2]!,
      hours: Object.fromEntries(Object.entries(d as Record<string, unknown>).filter(([k]) => /^h\d\d$/.test(k))) as Record<string, HourDoc>,
    }));
  }

  /** Deletes the hourly documents of the days that had ended by `before` (Unix ms). */
  async sweepHours(before: number): Promise<number> {
    return (await this.col.deleteMany({ _id: HOURLY, t: { $lte: before - DAY_MS } })).deletedCount;
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
