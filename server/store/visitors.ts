// One document per visitor (`_id` = iq_<ulid>): counters, the last two
// component sets (what fuzzy matching compares against) and recent activity
// for velocity.
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
}

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

  async getMany(visitorIds: string[]): Promise<VisitorDoc[]> {
    const docs = await Promise.all(visitorIds.map((id) => this.col.findOne({ _id: id })));
    return docs.filter((d): d is VisitorDoc => d !== null);
  }

  /** Creates the visitor with its first visit already counted. */
  async create(doc: VisitorDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /** Removes a visitor that lost the race for its fingerprint (it has no visits). */
  async delete(visitorId: string): Promise<void> {
    await this.col.deleteOne({ _id: visitorId, visitCount: 0 });
  }

  /**
   * Counts one more visit. Serialised per visitor in this process (FerretDB)
   * and guarded by a compare-and-set on visitCount (several MongoDB processes).
   */
  recordVisit(
    visitorId: string,
    now: number,
    components: Record<string, string>,
    activity: RecentActivity,
    windowMs: number,
  ): Promise<VisitRecorded> {
    return this.lock.run(visitorId, async () => {
      for (;;) {
        const doc = await this.col.findOne({ _id: visitorId });
        if (!doc) throw new Error(`visitor ${visitorId} disappeared`);
        const recent = [...doc.recent.filter((r) => r.t > now - windowMs), activity];
        const res = await this.col.updateOne(
          { _id: visitorId, visitCount: doc.visitCount },
          {
            $set: { lastSeenAt: now, components, previousComponents: doc.components, recent },
            $inc: { visitCount: 1 },
          },
        );
        if (res.modifiedCount === 1) {
          return { visitCount: doc.visitCount + 1, firstSeenAt: doc.firstSeenAt, previousSeenAt: doc.lastSeenAt, recent };
        }
      }
    });
  }
}
