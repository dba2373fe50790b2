// Dashboard sessions, stored under `_id` = SHA-256 of the cookie value.
// Expiry is checked on read and swept periodically (FerretDB has no TTL indexes).
import type { Collection, Db } from 'mongodb';

export interface SessionDoc {
  _id: string;
  userId: string;
  accountId: string;
  createdAt: Date;
  expiresAt: Date;
}

export class SessionsRepo {
  private readonly col: Collection<SessionDoc>;

  constructor(db: Db) {
    this.col = db.collection('sessions');
  }

  async insert(doc: SessionDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  async findLive(id: string, now: Date): Promise<SessionDoc | null> {
    const doc = await this.col.findOne({ _id: id });
    return doc && doc.expiresAt > now ? doc : null;
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ userId: 1 });
  }

  /** Deletes all but the user's `keep` newest sessions. */
  async keepNewest(userId: string, keep: number): Promise<void> {
    const older = await this.col.find({ userId }).sort({ createdAt: -1, _id: 1 }).skip(keep).project<{ _id: string }>({ _id: 1 }).toArray();
    await Promise.all(older.map((s) => this.col.deleteOne({ _id: s._id })));
  }

  /** Makes another account the session's current one. */
  async setAccount(id: string, accountId: string): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { accountId } });
  }

  /** Ends the user's sessions whose current account is `accountId` (they were removed from it). */
  async deleteInAccount(userId: string, accountId: string): Promise<number> {
    return (await this.col.deleteMany({ userId, accountId })).deletedCount;
  }

  async delete(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }

  async deleteExpired(now: Date): Promise<number> {
    return (await this.col.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }
}
