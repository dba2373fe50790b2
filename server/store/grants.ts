// Device code grants (spec 2.9, 3.1), laid out for FerretDB v1 as well as
// MongoDB (see shared/design/database.md):
//
// - `deviceGrants`: `_id` = SHA-256 of the device code, so every poll is a
//   point read. Creation data never changes; the only mutable fields are the
//   poll state (`interval`, `lastPolledAt`).
// - `deviceUserCodes`: `_id` = the user code (8 letters, no dash) → grant id.
//   A unique insert claims the code, so it is unique among live grants; a
//   code whose grant has expired is deleted and reused.
// - `deviceGrantClaims`: the state transitions, each claimed by a unique
//   insert, the one primitive that is exactly-once on both servers:
//   `decide:<grantId>` (authorized or denied, by which account, for which
//   project) and `consume:<grantId>` (the one poll that received the key).
//   A grant's state is derived from these documents (see DeviceFlowService),
//   never from a conditional update, which FerretDB does not make atomic.
// - `deviceFlowLimits`: fixed-window counters for rate limits.
//
// No TTL indexes: expiry is checked in code on every read and `deleteExpired`
// is the periodic sweep.
import type { Collection, Db } from 'mongodb';
import type { Stamp } from './audit.js';
import { insertUnique, isDuplicateKey } from './errors.js';
import { KeyedLock } from './keyedLock.js';

export interface GrantDoc {
  _id: string; // sha256 hex of the device code
  userCode: string; // 8 letters, no dash
  clientName: string;
  requestIp: string;
  requestUserAgent: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** Seconds the tool must wait between polls; raised by slow_down. */
  interval: number;
  lastPolledAt: Date | null;
}

export interface UserCodeDoc {
  _id: string; // the user code, 8 letters, no dash
  grantId: string;
  expiresAt: Date;
}

export interface DecisionDoc {
  _id: string; // decide:<grantId>
  grantId: string;
  decision: 'authorized' | 'denied';
  accountId: string;
  userId: string;
  projectId: string | null;
  decidedAt: Date;
  expiresAt: Date;
}

export interface ConsumptionDoc {
  _id: string; // consume:<grantId>
  grantId: string;
  consumedAt: Date;
  /** The key issued to the poll that won the claim (set right after issuing). */
  keyId: string | null;
  expiresAt: Date;
}

interface LimitDoc {
  _id: string;
  count: number;
  windowStart: Date;
  expiresAt: Date;
}

type ClaimDoc = DecisionDoc | ConsumptionDoc;

export type LimitResult = { ok: true; windowStart: Date } | { ok: false; retryAfterMs: number };

export const decisionId = (grantId: string) => `decide:${grantId}`;
export const consumptionId = (grantId: string) => `consume:${grantId}`;

export class GrantsRepo {
  private readonly grants: Collection<GrantDoc>;
  private readonly userCodes: Collection<UserCodeDoc>;
  private readonly claims: Collection<ClaimDoc>;
  private readonly limits: Collection<LimitDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.grants = db.collection('deviceGrants');
    this.userCodes = db.collection('deviceUserCodes');
    this.claims = db.collection('deviceGrantClaims');
    this.limits = db.collection('deviceFlowLimits');
  }

  /**
   * Claims a user code for a grant: true when this call inserted it. A code
   * held by a grant whose window has passed is released and claimed again.
   */
  async claimUserCode(doc: UserCodeDoc, now: Date): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.userCodes.insertOne(doc);
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const released = await this.userCodes.deleteOne({ _id: doc._id, expiresAt: { $lte: now } });
        if (released.deletedCount === 0) return false;
      }
    }
    return false;
  }

  userCode(code: string): Promise<UserCodeDoc | null> {
    return this.userCodes.findOne({ _id: code });
  }

  async insert(doc: GrantDoc): Promise<void> {
    await this.grants.insertOne(doc);
  }

  byId(grantId: string): Promise<GrantDoc | null> {
    return this.grants.findOne({ _id: grantId });
  }

  decision(grantId: string): Promise<DecisionDoc | null> {
    return this.claims.findOne({ _id: decisionId(grantId) }) as Promise<DecisionDoc | null>;
  }

  consumption(grantId: string): Promise<ConsumptionDoc | null> {
    return this.claims.findOne({ _id: consumptionId(grantId) }) as Promise<ConsumptionDoc | null>;
  }

  /** The pending → authorized|denied transition: true for the one caller whose insert won. */
  async claimDecision(doc: DecisionDoc, stamp?: Stamp): Promise<boolean> {
    await stamp?.intend(this.claims, doc._id);
    const claimed = await this.claim(stamp ? stamp.insert(doc) : doc);
    if (claimed) stamp?.landed();
    return claimed;
  }

  /** The authorized → consumed transition: true for the one poll whose insert won. */
  claimConsumption(doc: ConsumptionDoc): Promise<boolean> {
    return this.claim(doc);
  }

  /** Undoes a consumption claim whose key could not be issued, so a later poll can try again. */
  async releaseConsumption(grantId: string): Promise<void> {
    await this.claims.deleteOne({ _id: consumptionId(grantId) });
  }

  async setConsumedKey(grantId: string, keyId: string): Promise<void> {
    await this.claims.updateOne({ _id: consumptionId(grantId) }, { $set: { keyId } });
  }

  private claim(doc: ClaimDoc): Promise<boolean> {
    return insertUnique(this.claims, doc);
  }

  /**
   * Records a poll of a pending grant and returns its interval: a poll sooner
   * than `interval` seconds after the previous one raises it by `slowDown`
   * (RFC 8628 slow_down). Serialised per grant in this process; on MongoDB the
   * `$inc` is atomic across processes too (FerretDB may lose a concurrent
   * bump, which only makes the tool wait less).
   */
  recordPoll(grantId: string, now: Date, slowDown: number): Promise<number | null> {
    return this.lock.run(`poll:${grantId}`, async () => {
      const doc = await this.grants.findOne({ _id: grantId });
      if (!doc) return null;
      const tooFast = doc.lastPolledAt !== null && now.getTime() - doc.lastPolledAt.getTime() < doc.interval * 1000;
      if (!tooFast) {
        await this.grants.updateOne({ _id: grantId }, { $set: { lastPolledAt: now } });
        return doc.interval;
      }
      await this.grants.updateOne({ _id: grantId }, { $set: { lastPolledAt: now }, $inc: { interval: slowDown } });
      return doc.interval + slowDown;
    });
  }

  /**
   * Takes one unit from the fixed-window counter `key` (at most `limit` per
   * `windowMs`). Exact within this process (keyed lock) and across processes
   * on MongoDB (every write is conditional on the state it read).
   */
  takeLimit(key: string, limit: number, windowMs: number, now: Date): Promise<LimitResult> {
    return this.lock.run(`limit:${key}`, async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const doc = await this.limits.findOne({ _id: key });
        const fresh: LimitDoc = { _id: key, count: 1, windowStart: now, expiresAt: new Date(now.getTime() + windowMs) };
        if (!doc) {
          try {
            await this.limits.insertOne(fresh);
            return { ok: true, windowStart: now };
          } catch (err) {
            if (!isDuplicateKey(err)) throw err;
            continue;
          }
        }
        if (now.getTime() - doc.windowStart.getTime() >= windowMs) {
          const r = await this.limits.replaceOne({ _id: key, windowStart: doc.windowStart }, fresh);
          if (r.matchedCount === 1) return { ok: true, windowStart: now };
          continue;
        }
        const retryAfterMs = doc.windowStart.getTime() + windowMs - now.getTime();
        if (doc.count >= limit) return { ok: false, retryAfterMs };
        const r = await this.limits.updateOne({ _id: key, windowStart: doc.windowStart, count: { $lt: limit } }, { $inc: { count: 1 } });
        if (r.matchedCount === 1) return { ok: true, windowStart: doc.windowStart };
      }
      // Lost every race against other processes: treat as over the limit.
      return { ok: false, retryAfterMs: 1000 };
    });
  }

  /** Gives back a unit taken by `takeLimit` in the same window. */
  refundLimit(key: string, windowStart: Date): Promise<void> {
    return this.lock.run(`limit:${key}`, async () => {
      await this.limits.updateOne({ _id: key, windowStart, count: { $gt: 0 } }, { $inc: { count: -1 } });
    });
  }

  /**
   * The sweep: deletes grants, their user codes and claims whose window ended
   * before `cutoff`, and rate-limit windows that have passed `now`.
   */
  async deleteExpired(cutoff: Date, now: Date): Promise<number> {
    const results = await Promise.all([
      this.grants.deleteMany({ expiresAt: { $lt: cutoff } }),
      this.userCodes.deleteMany({ expiresAt: { $lt: cutoff } }),
      this.claims.deleteMany({ expiresAt: { $lt: cutoff } }),
      this.limits.deleteMany({ expiresAt: { $lte: now } }),
    ]);
    return results.reduce((n, r) => n + r.deletedCount, 0);
  }
}
