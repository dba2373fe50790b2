// The matching index, all point reads by `_id`, scoped by account so one
// account's devices can never link to another's:
// - `<acc>:x:<exactKey>` → the visitor owning an exact stable fingerprint;
//   created by a unique insert, which also decides concurrent first visits;
// - `<acc>:p:<partialKey>` → up to PARTIAL_CAP most recent visitors sharing a
//   partial key (fuzzy-match candidates);
// - `<acc>:t:<tokenHash>` → the visitor a stored device token names.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, upsert } from './errors.js';
import { KeyedLock } from './keyedLock.js';

interface IndexDoc {
  _id: string;
  visitorId?: string;
  visitorIds?: string[];
}

export const PARTIAL_CAP = 10;

export class FingerprintsRepo {
  private readonly col: Collection<IndexDoc>;
  private readonly lock = new KeyedLock();

  constructor(db: Db) {
    this.col = db.collection('fingerprints');
  }

  async exact(accountId: string, key: string): Promise<string | null> {
    return (await this.col.findOne({ _id: `${accountId}:x:${key}` }))?.visitorId ?? null;
  }

  /** Claims the exact key for `visitorId`; returns whoever owns it afterwards. */
  async claimExact(accountId: string, key: string, visitorId: string): Promise<string> {
    return this.claim(`${accountId}:x:${key}`, visitorId);
  }

  private async claim(_id: string, visitorId: string): Promise<string> {
    try {
      await this.col.insertOne({ _id, visitorId });
      return visitorId;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const owner = (await this.col.findOne({ _id }))?.visitorId;
      if (!owner) throw new Error(`index entry ${_id} vanished after a duplicate-key error`);
      return owner;
    }
  }

  async candidates(accountId: string, partialKeys: string[]): Promise<string[]> {
    const docs = await Promise.all(partialKeys.map((k) => this.col.findOne({ _id: `${accountId}:p:${k}` })));
    return [...new Set(docs.flatMap((d) => d?.visitorIds ?? []))];
  }

  /** Moves `visitorId` to the front of each partial key's list, keeping the list bounded. */
  async addPartials(accountId: string, partialKeys: string[], visitorId: string): Promise<void> {
    await Promise.all(
      partialKeys.map((k) => {
        const _id = `${accountId}:p:${k}`;
        return this.lock.run(_id, async () => {
          const ids = (await this.col.findOne({ _id }))?.visitorIds ?? [];
          if (ids[0] === visitorId) return;
          const next = [visitorId, ...ids.filter((id) => id !== visitorId)].slice(0, PARTIAL_CAP);
          await upsert(() => this.col.replaceOne({ _id }, { visitorIds: next }, { upsert: true }));
        });
      }),
    );
  }

  async token(accountId: string, tokenHash: string): Promise<string | null> {
    return (await this.col.findOne({ _id: `${accountId}:t:${tokenHash}` }))?.visitorId ?? null;
  }

  /** Claims an unmapped token for `visitorId` (unique insert); returns its owner afterwards. */
  async claimToken(accountId: string, tokenHash: string, visitorId: string): Promise<string> {
    return this.claim(`${accountId}:t:${tokenHash}`, visitorId);
  }

  /** Conditional re-point (the filter's `_id` keeps it a point read); returns the token's owner afterwards. */
  async moveToken(accountId: string, tokenHash: string, from: string, to: string): Promise<string> {
    const _id = `${accountId}:t:${tokenHash}`;
    const moved = await this.col.updateOne({ _id, visitorId: from }, { $set: { visitorId: to } });
    if (moved.modifiedCount === 1) return to;
    const owner = (await this.col.findOne({ _id }))?.visitorId;
    if (!owner) throw new Error(`index entry ${_id} vanished while moving it`);
    return owner;
  }

  async setToken(accountId: string, tokenHash: string, visitorId: string): Promise<void> {
    const _id = `${accountId}:t:${tokenHash}`;
    await upsert(() => this.col.replaceOne({ _id }, { visitorId }, { upsert: true }));
  }
}
