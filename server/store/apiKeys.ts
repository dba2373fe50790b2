// API keys are stored under `_id` = SHA-256 of the plaintext, so authentication
// is a point read; the plaintext itself is never stored.
import type { Collection, Db } from 'mongodb';
import type { Stamp } from './audit.js';
import { KeyedLock } from './keyedLock.js';
import { TtlCache, type CacheOptions } from './ttlCache.js';

export type ApiKeyType = 'live' | 'test' | 'secret';

export interface ApiKeyDoc {
  _id: string; // sha256 hex of the plaintext key
  id: string; // key_<ulid>, the public identifier
  accountId: string;
  projectId: string;
  name: string;
  type: ApiKeyType;
  status: 'active' | 'revoked';
  hint: string;
  source: 'dashboard' | 'cli';
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export class ApiKeysRepo {
  private readonly col: Collection<ApiKeyDoc>;
  private readonly lock = new KeyedLock();

  /** By hash: identify reads its key on every call. */
  private readonly cache: TtlCache<ApiKeyDoc>;

  constructor(db: Db, cache: CacheOptions) {
    this.col = db.collection<ApiKeyDoc>('apiKeys');
    this.cache = new TtlCache(cache.ttlMs, cache.now);
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([this.col.createIndex({ id: 1 }, { unique: true }), this.col.createIndex({ projectId: 1 })]);
  }

  findByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.cache.get(hash, () => this.col.findOne({ _id: hash }));
  }

  async insert(doc: ApiKeyDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /**
   * Inserts unless the project already has `maxActive` active keys; false
   * then. Exact within this process (a lock per project), like projects.
   */
  insertBounded(doc: ApiKeyDoc, maxActive: number, stamp?: Stamp): Promise<boolean> {
    return this.lock.run(doc.projectId, async () => {
      if ((await this.col.countDocuments({ projectId: doc.projectId, status: 'active' })) >= maxActive) return false;
      await stamp?.intend(this.col, doc._id);
      await this.col.insertOne(stamp ? stamp.insert(doc) : doc);
      stamp?.landed();
      return true;
    });
  }

  listForProject(projectId: string): Promise<ApiKeyDoc[]> {
    return this.col.find({ projectId }).sort({ createdAt: 1, id: 1 }).toArray();
  }

  /** The project's key by its public id (not cached). */
  ofProject(projectId: string, keyId: string): Promise<ApiKeyDoc | null> {
    return this.col.findOne({ id: keyId, projectId });
  }

  /**
   * Revokes an active key: the key as it is after, and whether this call
   * revoked it (false: another did first, whose revokedAt it keeps).
   */
  async revoke(doc: ApiKeyDoc, now: Date, stamp?: Stamp): Promise<{ doc: ApiKeyDoc; changed: boolean }> {
    this.cache.delete(doc._id);
    await stamp?.intend(this.col, doc._id);
    const update = { $set: { status: 'revoked' as const, revokedAt: now } };
    const revoked = await this.col.findOneAndUpdate({ _id: doc._id, status: 'active' }, stamp ? stamp.update(update) : update, { returnDocument: 'after' });
    this.cache.delete(doc._id);
    if (revoked) stamp?.landed();
    return revoked ? { doc: revoked, changed: true } : { doc: (await this.col.findOne({ _id: doc._id })) ?? doc, changed: false };
  }

  /** Records use, at most once a minute per key. */
  async touch(hash: string, now: Date, previous: Date | null): Promise<void> {
    if (previous && now.getTime() - previous.getTime() < 60_000) return;
    await this.col.updateOne({ _id: hash }, { $set: { lastUsedAt: now } });
    this.cache.delete(hash);
  }
}
