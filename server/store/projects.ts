import type { Collection, Db } from 'mongodb';
import { KeyedLock } from './keyedLock.js';

export interface ProjectDoc {
  _id: string; // prj_<ulid>
  accountId: string;
  name: string;
  allowedDomains: string[];
  createdAt: Date;
  /** Sealed results (server/sealing/): the key, encrypted at rest (SecretBox). */
  sealing?: { key: string; since: Date } | null;
  /** Webhook endpoints of the project (server/webhooks/): identify writes an outbox entry only while this is > 0. */
  webhookEndpoints?: number;
}

export class ProjectsRepo {
  private readonly col: Collection<ProjectDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('projects');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ accountId: 1 });
  }

  async insert(doc: ProjectDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /**
   * Inserts unless the account already has `max` projects; false then. Exact
   * within this process (counted under a lock per account); several
   * processes creating at the same moment may each add one more.
   */
  insertBounded(doc: ProjectDoc, max: number): Promise<boolean> {
    return this.lock.run(doc.accountId, async () => {
      if ((await this.col.countDocuments({ accountId: doc.accountId })) >= max) return false;
      await this.col.insertOne(doc);
      return true;
    });
  }

  /** The project if it belongs to the account; another account's is null. */
  async ofAccount(accountId: string, projectId: string): Promise<ProjectDoc | null> {
    const doc = await this.col.findOne({ _id: projectId });
    return doc && doc.accountId === accountId ? doc : null;
  }

  byId(projectId: string): Promise<ProjectDoc | null> {
    return this.col.findOne({ _id: projectId });
  }

  listForAccount(accountId: string): Promise<ProjectDoc[]> {
    return this.col.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  async setSealing(projectId: string, sealing: ProjectDoc['sealing']): Promise<void> {
    await this.col.updateOne({ _id: projectId }, { $set: { sealing } });
  }

  async setWebhookEndpoints(projectId: string, count: number): Promise<void> {
    await this.col.updateOne({ _id: projectId }, { $set: { webhookEndpoints: count } });
  }

  async update(projectId: string, set: Partial<Pick<ProjectDoc, 'name' | 'allowedDomains'>>): Promise<ProjectDoc | null> {
    return this.col.findOneAndUpdate({ _id: projectId }, { $set: set }, { returnDocument: 'after' });
  }
}
