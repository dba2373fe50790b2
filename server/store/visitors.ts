// One document per visitor (`_id` = iq_<ulid>): counters, the last two
// component sets (what fuzzy matching compares against), the networks it was
// recently seen on (what a fingerprint-only link must agree with), the device
// tokens it presented (to notice two devices merged into one) and recent
// activity for velocity.
import type { Collection, Db } from 'mongodb';
import { KeyedLock } from './keyedLock.js';

export interface RecentActivity {
  t: number;
  ip: string;
  country: string;
}

export interface VisitorDoc {
  _id: string;
  accountId: string;
  firstSeenAt: number;
  lastSeenAt: number;
  visitCount: number;
  components: Record<string, string>;
  previousComponents: Record<string, string> | null;
  /** Events of the last 24 hours, oldest first. */
  recent: RecentActivity[];
  /** Distinct networks (identification's /24 or /48) of recent visits, newest first; absent on visitors stored before it existed. */
  networks?: string[];
  /** Device tokens (hashes) of recent visits, most recently presented first; absent on older visitors. */
  tokens?: TokenUse[];
}

export interface TokenUse {
  hash: string;
  first: number;
  last: number;
}

/** Networks remembered per visitor: home, work, a phone's usual carriers. */
export const NETWORKS_CAP = 8;

/** Tokens remembered per visitor: enough to see two alternate, few enough to stay small. */
export const TOKENS_CAP = 8;

/** Where a visit came from, kept for matching later visits. */
export interface VisitOrigin {
  network: string | null;
  /** The device token's hash, when the visit presented one this visitor owns. */
  tokenHash: string | null;
}

/** The visitor's networks and tokens after a visit from `origin` at `now`. */
export function withOrigin(networks: string[], tokens: TokenUse[], origin: VisitOrigin, now: number) {
  const { network, tokenHash } = origin;
  const prior = tokenHash ? tokens.find((t) => t.hash === tokenHash) : undefined;
  return {
    networks: network ? [network, ...networks.filter((n) => n !== network)].slice(0, NETWORKS_CAP) : networks,
    tokens: tokenHash
      ? [{ hash: tokenHash, first: prior?.first ?? now, last: now }, ...tokens.filter((t) => t.hash !== tokenHash)].slice(0, TOKENS_CAP)
      : tokens,
  };
}

/**
 * Activity kept per visitor for velocity: the last 24 hours, at most this many
 * events (beyond it the 24-hour counts saturate; highActivity fires long before).
 */
export const RECENT_CAP = 5_000;

export interface VisitRecorded {
  visitCount: number;
  firstSeenAt: number;
  /** lastSeenAt before this visit (equal to now on a first visit). */
  previousSeenAt: number;
  recent: RecentActivity[];
}

export class VisitorsRepo {
  private readonly col: Collection<VisitorDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('visitors');
  }

  async get(visitorId: string): Promise<VisitorDoc | null> {
    return this.col.findOne({ _id: visitorId });
  }

  /** Creates a visitor with no visits yet; recordVisit counts the first. */
  async create(doc: VisitorDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /** Removes a visitor that lost the race for its fingerprint (it has no visits). */
  async delete(visitorId: string): Promise<void> {
    await this.col.deleteOne({ _id: visitorId, visitCount: 0 });
  }

  /**
   * Counts one more visit. Each update filters on `_id` alone, the only
   * filter FerretDB's SQLite backend answers without a scan. The counter and
   * the activity list change with atomic operators (exact on MongoDB across
   * processes); the per-visitor lock makes the read-modify-write exact on
   * FerretDB within the process.
   */
  recordVisit(
    visitorId: string,
    now: number,
    components: Record<string, string>,
    activity: RecentActivity,
    windowMs: number,
    origin: VisitOrigin,
  ): Promise<VisitRecorded> {
    return this.lock.run(visitorId, async () => {
      const before = await this.col.findOneAndUpdate(
        { _id: visitorId },
        { $inc: { visitCount: 1 }, $set: { lastSeenAt: now, components }, $push: { recent: activity } },
        { returnDocument: 'before' },
      );
      if (!before) throw new Error(`visitor ${visitorId} disappeared`);
      const cutoff = now - windowMs;
      const kept = before.recent.filter((r) => r.t > cutoff);
      const overflow = kept.length + 1 - RECENT_CAP;
      const set = { previousComponents: before.components, ...withOrigin(before.networks ?? [], before.tokens ?? [], origin, now) };
      await this.col.updateOne(
        { _id: visitorId },
        overflow > 0
          ? { $set: { ...set, recent: [...kept.slice(overflow), activity] } }
          : { $set: set, $pull: { recent: { t: { $lte: cutoff } } } },
      );
      return {
        visitCount: before.visitCount + 1,
        firstSeenAt: before.firstSeenAt,
        previousSeenAt: before.lastSeenAt,
        recent: [...kept.slice(Math.max(0, overflow)), activity],
      };
    });
  }
}
