// Claims of requestIds by protected requests (server/decisions/claims.ts):
// one document per requestId used, inserted once, so a replay fails on the
// primary key, atomically across processes and on FerretDB too. Kept until
// no claim could be accepted any more (the longest maxAge), then swept.
import type { Collection, Db } from 'mongodb';

interface ClaimDoc {
  _id: string; // requestId
  accountId: string;
  at: Date;
}

const DUPLICATE_KEY = 11000;

export class ClaimsRepo {
  private readonly col: Collection<ClaimDoc>;

  constructor(db: Db) {
    this.col = db.collection('claims');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ at: 1 });
  }

  /** True for the first claim of a requestId, false for every later one. */
  async claim(requestId: string, accountId: string, at: Date): Promise<boolean> {
    try {
      await this.col.insertOne({ _id: requestId, accountId, at });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === DUPLICATE_KEY) return false;
      throw err;
    }
  }

  async deleteBefore(before: Date): Promise<number> {
    return (await this.col.deleteMany({ at: { $lt: before } })).deletedCount;
  }
}
