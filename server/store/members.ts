// Who belongs to which account, with which role. `_id` = `<accountId>|<userId>`,
// so the membership check every session request makes is a point read, and
// joining twice is refused by the unique insert. Never cached: removing a
// member or lowering a role must hold on their next request in every process.
import type { Collection, Db } from 'mongodb';
import type { Role } from '../../contract/common.js';
import type { Stamp } from './audit.js';
import { insertUnique } from './errors.js';

export interface MemberDoc {
  _id: string; // <accountId>|<userId>
  accountId: string;
  userId: string;
  role: Role;
  joinedAt: Date;
}

export const memberId = (accountId: string, userId: string) => `${accountId}|${userId}`;

export class MembersRepo {
  private readonly col: Collection<MemberDoc>;

  constructor(db: Db) {
    this.col = db.collection('members');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([this.col.createIndex({ userId: 1 }), this.col.createIndex({ accountId: 1 })]);
  }

  /** Adds the member; false when they already belong to the account. */
  async add(doc: MemberDoc, stamp?: Stamp): Promise<boolean> {
    await stamp?.intend(this.col, doc._id);
    const added = await insertUnique(this.col, stamp ? stamp.insert(doc) : doc);
    if (added) stamp?.landed();
    return added;
  }

  get(accountId: string, userId: string): Promise<MemberDoc | null> {
    return this.col.findOne({ _id: memberId(accountId, userId) });
  }

  /** The user's memberships, oldest first. */
  ofUser(userId: string): Promise<MemberDoc[]> {
    return this.col.find({ userId }).sort({ joinedAt: 1, _id: 1 }).toArray();
  }

  /** The account's members, oldest first. */
  ofAccount(accountId: string): Promise<MemberDoc[]> {
    return this.col.find({ accountId }).sort({ joinedAt: 1, _id: 1 }).toArray();
  }

  /** Every membership (instance administration; not a hot path). */
  all(): Promise<MemberDoc[]> {
    return this.col.find({}).toArray();
  }

  countOwners(accountId: string): Promise<number> {
    return this.col.countDocuments({ accountId, role: 'owner' });
  }

  /** Sets the role; the membership as it was before, or null when there is none. */
  async setRole(accountId: string, userId: string, role: Role, stamp?: Stamp): Promise<MemberDoc | null> {
    const _id = memberId(accountId, userId);
    await stamp?.intend(this.col, _id);
    const before = await this.col.findOneAndUpdate({ _id }, stamp ? stamp.update({ $set: { role } }) : { $set: { role } }, { returnDocument: 'before' });
    if (before) stamp?.landed();
    return before;
  }

  /** Puts back the role a refused change replaced, and takes its stamp out with it. */
  async restoreRole(accountId: string, userId: string, role: Role, stamp: Stamp): Promise<void> {
    await this.col.updateOne({ _id: memberId(accountId, userId) }, stamp.undo({ $set: { role } }));
  }

  /** Removes the membership; the removed one, or null when there was none. */
  async remove(accountId: string, userId: string, stamp?: Stamp): Promise<MemberDoc | null> {
    const _id = memberId(accountId, userId);
    await stamp?.intend(this.col, _id, true);
    const removed = await this.col.findOneAndDelete({ _id });
    if (removed) stamp?.landed();
    return removed;
  }

  /** Puts back a membership a refused change removed (`add` semantics otherwise). */
  async restore(doc: MemberDoc): Promise<void> {
    await this.col.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }
}
