// Rulesets (server/decisions/): every version of a project's rules, kept so
// that an event's `decision.rulesetVersion` can always be read back. `_id` =
// `<projectId>|<version, 10 digits>`, so a project's versions are one `_id`
// range and saving a version that exists fails on the primary key (two
// simultaneous saves on one base: one wins, even on FerretDB).
import type { Collection, Db } from 'mongodb';
import type { z } from 'zod';
import type { RuleSchema } from '../../contract/decisions.js';

/** Stored as the contract's Rule reads. */
export type StoredRule = z.infer<typeof RuleSchema>;

export interface RulesetDoc {
  _id: string;
  accountId: string;
  projectId: string;
  version: number;
  rules: StoredRule[];
  defaultAction: StoredRule['action'];
  createdAt: Date;
  createdBy: string;
}

const rulesetId = (projectId: string, version: number) => `${projectId}|${String(version).padStart(10, '0')}`;

const DUPLICATE_KEY = 11000;

export class RulesetsRepo {
  private readonly col: Collection<RulesetDoc>;

  constructor(db: Db) {
    this.col = db.collection('rulesets');
  }

  /** False when the version exists already (another save on the same base came first). */
  async insert(doc: Omit<RulesetDoc, '_id'>): Promise<boolean> {
    try {
      await this.col.insertOne({ _id: rulesetId(doc.projectId, doc.version), ...doc });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === DUPLICATE_KEY) return false;
      throw err;
    }
  }

  get(projectId: string, version: number): Promise<RulesetDoc | null> {
    return this.col.findOne({ _id: rulesetId(projectId, version) });
  }

  /** The project's newest version (the one its document names may lag behind a save in flight). */
  latest(projectId: string): Promise<RulesetDoc | null> {
    return this.col.findOne({ _id: { $gt: `${projectId}|`, $lt: `${projectId}|~` } }, { sort: { _id: -1 } });
  }

  async deleteProject(projectId: string): Promise<void> {
    await this.col.deleteMany({ _id: { $gt: `${projectId}|`, $lt: `${projectId}|~` } });
  }
}
