// Visit history in pages of VISITS_PER_PAGE (`_id` = `<visitorId>:<page>`),
// so the newest visits are at most two point reads and older pages are
// reached by page number, never by scanning events. Pages hold compact
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

  append(visitorId: string, visit: StoredVisit): Promise<void> {
    const _id = `${visitorId}:${pageOf(visit.seq)}`;
    // $push is a read-modify-write on FerretDB: serialise per page.
    return this.lock.run(_id, async () => {
      await upsert(() => this.col.updateOne({ _id }, { $push: { visits: visit } }, { upsert: true }));
    });
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
