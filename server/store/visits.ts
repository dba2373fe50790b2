// Visit history in pages of VISITS_PER_PAGE (`_id` = `<visitorId>:<page>`),
// so the newest visits are at most two point reads and older pages are
// reached by page number, never by scanning events. The current page lives
// in the visitor document (server/store/visitors.ts) and moves here when the
// next page starts. Pages hold compact
// summaries; each visit's signal snapshot stays in its event (point read by
// requestId), which keeps the identify write small.
import type { Collection, Db } from 'mongodb';
import { upsert } from './errors.js';
import { KeyedLock } from './keyedLock.js';

export const VISITS_PER_PAGE = 20;

export interface StoredVisit {
  seq: number;
  requestId: string;
  id: string;
  timestamp: number;
  country: string;
  city: string;
  region: string;
  asn: number | null;
  asnOrg: string;
  asnCategory: string;
  botProbability: number;
  confidence: number;
  riskFactors: string[];
}

interface PageDoc {
  _id: string;
  visits: StoredVisit[];
}

export const pageOf = (seq: number) => Math.floor((seq - 1) / VISITS_PER_PAGE);

export class VisitsRepo {
  private readonly col: Collection<PageDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('visitPages');
  }

  /**
   * Stores a finished page's visits that the visitor document held (see
   * server/store/visitors.ts). `$addToSet` keeps it idempotent when a retry
   * stores them again, and keeps visits stored there before the visitor held any.
   */
  async keep(visitorId: string, visits: StoredVisit[]): Promise<void> {
    const byPage = new Map<number, StoredVisit[]>();
    for (const v of visits) byPage.set(pageOf(v.seq), [...(byPage.get(pageOf(v.seq)) ?? []), v]);
    await Promise.all(
      [...byPage].map(([page, list]) => {
        const _id = `${visitorId}:${page}`;
        return this.lock.run(_id, () => upsert(() => this.col.updateOne({ _id }, { $addToSet: { visits: { $each: list } } }, { upsert: true })));
      }),
    );
  }

  /**
   * Removes the page's visits older than `cutoff` (ms), and the page once
   * it is empty. `$pullAll` of the exact entries read: atomic on MongoDB
   * against a concurrent append; on FerretDB serialised with appends by the
   * same lock in this process.
   */
  dropOlderThan(visitorId: string, page: number, cutoff: number): Promise<void> {
    const _id = `${visitorId}:${page}`;
    return this.lock.run(_id, async () => {
      const visits = (await this.col.findOne({ _id }))?.visits ?? [];
      const old = visits.filter((v) => v.timestamp < cutoff);
      if (!old.length) return;
      await this.col.updateOne({ _id }, { $pullAll: { visits: old } });
      if (old.length === visits.length) await this.col.deleteOne({ _id, visits: { $size: 0 } });
    });
  }

  async page(visitorId: string, page: number): Promise<StoredVisit[]> {
    if (page < 0) return [];
    return (await this.col.findOne({ _id: `${visitorId}:${page}` }))?.visits ?? [];
  }
}
