// Invitations to join an account with a role. The token is `dij_<id>_<secret>`:
// the id finds the document (a point read) and only SHA-256 of the secret is
// stored, compared in constant time. Using one is claimed by a unique insert
// in `memberInvitationUses` (`_id` = the invitation id), so it admits exactly
// one member even when accepted twice at the same moment.
import type { Collection, Db } from 'mongodb';
import type { Role } from '../../contract/common.js';
import type { Stamp } from './audit.js';
import { insertUnique } from './errors.js';

export interface MemberInvitationDoc {
  _id: string; // minv_<ulid>
  accountId: string;
  email: string;
  role: Role;
  /** SHA-256 (hex) of the token's secret part. */
  secretHash: string;
  createdBy: string; // user id
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface MemberInvitationUseDoc {
  _id: string; // the invitation id
  userId: string;
  usedAt: Date;
}

export class MemberInvitationsRepo {
  private readonly col: Collection<MemberInvitationDoc>;
  private readonly uses: Collection<MemberInvitationUseDoc>;

  constructor(db: Db) {
    this.col = db.collection('memberInvitations');
    this.uses = db.collection('memberInvitationUses');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ accountId: 1 });
  }

  async insert(doc: MemberInvitationDoc, stamp?: Stamp): Promise<void> {
    await stamp?.intend(this.col, doc._id);
    await this.col.insertOne(stamp ? stamp.insert(doc) : doc);
    stamp?.landed();
  }

  get(id: string): Promise<MemberInvitationDoc | null> {
    return this.col.findOne({ _id: id });
  }

  use(id: string): Promise<MemberInvitationUseDoc | null> {
    return this.uses.findOne({ _id: id });
  }

  /** Claims the invitation: true for the one caller whose insert won. */
  claimUse(doc: MemberInvitationUseDoc): Promise<boolean> {
    return insertUnique(this.uses, doc);
  }

  /** Undoes `claimUse` for an acceptance that did not go ahead. */
  async releaseUse(id: string): Promise<void> {
    await this.uses.deleteOne({ _id: id });
  }

  /** The account's invitations with their uses, newest first. */
  async ofAccount(accountId: string): Promise<{ invitation: MemberInvitationDoc; use: MemberInvitationUseDoc | null }[]> {
    const invitations = await this.col.find({ accountId }).sort({ createdAt: -1, _id: -1 }).toArray();
    const uses = invitations.length ? await this.uses.find({ _id: { $in: invitations.map((i) => i._id) } }).toArray() : [];
    return invitations.map((invitation) => ({ invitation, use: uses.find((u) => u._id === invitation._id) ?? null }));
  }

  /** The account's pending invitations (not withdrawn, expired or used) addressed to `email`. */
  async pendingFor(accountId: string, email: string, now: Date): Promise<MemberInvitationDoc[]> {
    const open = await this.col.find({ accountId, email, revokedAt: null, expiresAt: { $gt: now } }).toArray();
    const used = open.length ? await this.uses.find({ _id: { $in: open.map((i) => i._id) } }).toArray() : [];
    return open.filter((i) => !used.some((u) => u._id === i._id));
  }

  /** Withdraws one of the account's invitations: the one this call withdrew, null when none was pending a withdrawal. */
  async revoke(accountId: string, id: string, now: Date, stamp?: Stamp): Promise<MemberInvitationDoc | null> {
    await stamp?.intend(this.col, id);
    const update = { $set: { revokedAt: now } };
    const after = await this.col.findOneAndUpdate({ _id: id, accountId, revokedAt: null }, stamp ? stamp.update(update) : update, { returnDocument: 'after' });
    if (after) stamp?.landed();
    return after;
  }
}
