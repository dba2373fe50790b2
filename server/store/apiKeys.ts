// API keys are stored under `_id` = SHA-256 of the plaintext, so authentication
// is a point read; the plaintext itself is never stored.
import type { Collection, Db } from 'mongodb';

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

  constructor(db: Db) {
    this.col = db.collection<ApiKeyDoc>('apiKeys');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ id: 1 }, { unique: true });
  }

  findByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.col.findOne({ _id: hash });
  }

  async insert(doc: ApiKeyDoc): Promise<void> {
    await this.col.insertOne(doc);
  }
}
