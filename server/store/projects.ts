import type { Collection, Db, Filter, UpdateFilter } from 'mongodb';
import type { Stamp } from './audit.js';
import { KeyedLock } from './keyedLock.js';
import { TtlCache, type CacheOptions } from './ttlCache.js';

export interface ProjectDoc {
  _id: string; // prj_<ulid>
  accountId: string;
  name: string;
  allowedDomains: string[];
  createdAt: Date;
  /** Sealed results (server/sealing/): the key, encrypted at rest (SecretBox). */
  sealing?: { key: string; since: Date } | null;
  /**
   * First-party proxy secrets (server/proxy/): SHA-256 hex of the current one
   * and, for a day after a rotation, of the previous one.
   */
  proxy?: ProjectProxy | null;
  /**
   * Whether identification takes the customer's linkedId as evidence that a
   * visit is a device seen with it before (server/identification/linker.ts);
   * absent: yes.
   */
  linkedIdEvidence?: boolean;
  /** The project's linkedId key (server/keys/linkedIds.ts): the version it is derived with, and since when; null or absent: none. */
  linkedIdKey?: { version: number; since: Date } | null;
  /** The last version handed out, kept through a revocation so that a new key is never an old one. */
  linkedIdKeyVersions?: number;
  /** Webhook endpoints of the project (server/webhooks/): identify writes an outbox entry only while this is > 0. */
  webhookEndpoints?: number;
  /** Bumped after every change of the project's lists (server/decisions/listsService.ts): a process whose lists cache holds another version reads what changed; absent: 0, no list was ever made. */
  listsVersion?: number;
  /** The ruleset in force (server/decisions/); absent: none saved (version 0, everything allowed). */
  rulesetVersion?: number;
}

export interface ProxySecretDoc {
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  hash: string;
  /** Prefix and last four characters, for the dashboard. */
  hint: string;
  createdAt: Date;
}

export interface ProjectProxy {
  current: ProxySecretDoc;
  /** The secret a rotation replaced, accepted until `until`. */
  previous: (ProxySecretDoc & { until: Date }) | null;
}

export class ProjectsRepo {
  private readonly col: Collection<ProjectDoc>;
  private readonly lock = new KeyedLock();

  /** By id: identify checks its project's allowlist on every call. */
  private readonly cache: TtlCache<ProjectDoc>;

  constructor(db: Db, cache: CacheOptions) {
    this.col = db.collection('projects');
    this.cache = new TtlCache(cache.ttlMs, cache.now);
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
  insertBounded(doc: ProjectDoc, max: number, stamp?: Stamp): Promise<boolean> {
    return this.lock.run(doc.accountId, async () => {
      if ((await this.col.countDocuments({ accountId: doc.accountId })) >= max) return false;
      await stamp?.intend(this.col, doc._id);
      await this.col.insertOne(stamp ? stamp.insert(doc) : doc);
      stamp?.landed(this.serial(doc._id));
      return true;
    });
  }

  /** Writes of a project document in this process one at a time, for an audit stamp's removal (the lock of swapProxy and the others). */
  private serial(projectId: string) {
    return (write: () => Promise<void>) => this.lock.run(projectId, write);
  }

  /** `update`, stamped for an audited change (written pending just before). */
  private async stamped(projectId: string, filter: Filter<ProjectDoc>, update: UpdateFilter<ProjectDoc>, stamp?: Stamp): Promise<boolean> {
    await stamp?.intend(this.col, projectId);
    const { matchedCount } = await this.col.updateOne(filter, stamp ? stamp.update(update) : update);
    if (matchedCount) stamp?.landed(this.serial(projectId));
    return matchedCount === 1;
  }

  /** The project if it belongs to the account; another account's is null. */
  async ofAccount(accountId: string, projectId: string): Promise<ProjectDoc | null> {
    const doc = await this.col.findOne({ _id: projectId });
    return doc && doc.accountId === accountId ? doc : null;
  }

  /** Cached (CACHE_TTL_MS); ofAccount reads the database for the dashboard. */
  byId(projectId: string): Promise<ProjectDoc | null> {
    return this.cache.get(projectId, () => this.col.findOne({ _id: projectId }));
  }

  listForAccount(accountId: string): Promise<ProjectDoc[]> {
    return this.col.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  async setLinkedIdKey(projectId: string, linkedIdKey: ProjectDoc['linkedIdKey'], stamp?: Stamp): Promise<void> {
    this.cache.delete(projectId);
    await this.stamped(projectId, { _id: projectId }, { $set: { linkedIdKey, ...(linkedIdKey && { linkedIdKeyVersions: linkedIdKey.version }) } }, stamp);
    this.cache.delete(projectId);
  }

  async setSealing(projectId: string, sealing: ProjectDoc['sealing'], stamp?: Stamp): Promise<void> {
    this.cache.delete(projectId);
    await this.stamped(projectId, { _id: projectId }, { $set: { sealing } }, stamp);
    this.cache.delete(projectId);
  }

  /** Under the project's lock, so that a revocation is not lost to a rotation's write (keyedLock.ts). */
  setProxy(projectId: string, proxy: ProjectProxy | null, stamp?: Stamp): Promise<void> {
    return this.lock.run(projectId, async () => {
      this.cache.delete(projectId);
      await this.stamped(projectId, { _id: projectId }, { $set: { proxy } }, stamp);
      this.cache.delete(projectId);
    });
  }

  /**
   * Compare-and-set for a rotation: replaces the proxy settings only while
   * the current secret is still the one read (`currentHash`; null: none), so
   * of simultaneous rotations one wins and the others read again. False when
   * another change came first. Exact across processes on MongoDB; FerretDB
   * v1 does not apply a conditional update atomically, so it is exact there
   * within a process, under the project's lock (as visitors.ts's updates).
   */
  swapProxy(projectId: string, currentHash: string | null, proxy: ProjectProxy, stamp?: Stamp): Promise<boolean> {
    return this.lock.run(projectId, async () => {
      this.cache.delete(projectId);
      const filter = currentHash === null ? { _id: projectId, proxy: null } : { _id: projectId, 'proxy.current.hash': currentHash };
      const swapped = await this.stamped(projectId, filter, { $set: { proxy } }, stamp);
      this.cache.delete(projectId);
      return swapped;
    });
  }

  /**
   * Compare-and-set of the ruleset in force: from `from` to `to` only while
   * `from` is still current (absent counts as 0). Under the project's lock,
   * exact within a process on FerretDB (see swapProxy); the rulesets
   * collection's primary key decides between processes.
   */
  swapRulesetVersion(projectId: string, from: number, to: number, stamp?: Stamp): Promise<boolean> {
    return this.lock.run(projectId, async () => {
      this.cache.delete(projectId);
      const filter =
        from === 0 ? { _id: projectId, $or: [{ rulesetVersion: { $exists: false } }, { rulesetVersion: 0 }] } : { _id: projectId, rulesetVersion: from };
      const swapped = await this.stamped(projectId, filter, { $set: { rulesetVersion: to } }, stamp);
      this.cache.delete(projectId);
      return swapped;
    });
  }

  /** Drops this process's copy (another process changed the project). */
  forget(projectId: string): void {
    this.cache.delete(projectId);
  }

  async setWebhookEndpoints(projectId: string, count: number): Promise<void> {
    this.cache.delete(projectId);
    await this.col.updateOne({ _id: projectId }, { $set: { webhookEndpoints: count } });
    this.cache.delete(projectId);
  }

  /**
   * After a change of the project's lists has been written. Under the
   * project's lock, so that FerretDB, which applies $inc as a read and a
   * write, loses no bump within a process; a bump two processes make at once
   * may land as one, which still differs from what any cache loaded before
   * either change was written.
   */
  bumpListsVersion(projectId: string): Promise<void> {
    return this.lock.run(projectId, async () => {
      this.cache.delete(projectId);
      await this.col.updateOne({ _id: projectId }, { $inc: { listsVersion: 1 } });
      this.cache.delete(projectId);
    });
  }

  async update(projectId: string, set: Partial<Pick<ProjectDoc, 'name' | 'allowedDomains' | 'linkedIdEvidence'>>, stamp?: Stamp): Promise<ProjectDoc | null> {
    this.cache.delete(projectId);
    await stamp?.intend(this.col, projectId);
    const doc = await this.col.findOneAndUpdate({ _id: projectId }, stamp ? stamp.update({ $set: set }) : { $set: set }, { returnDocument: 'after' });
    if (doc) stamp?.landed(this.serial(projectId));
    this.cache.delete(projectId);
    return doc;
  }
}
