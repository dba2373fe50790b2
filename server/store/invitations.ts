// Sign-up invitations created by the administrator. `_id` = SHA-256 of the
// token (the token itself is never stored), so accepting one is a point
// read. Using one is claimed by a unique insert in `invitationUses`
// (`_id` = the invitation id), so an invitation admits exactly one account
// even when it is used twice at the same moment.
import type { Collection, Db } from 'mongodb';
import type { Stamp } from './audit.js';
import { insertUnique } from './errors.js';

export interface InvitationDoc {
  _id: string; // sha256 hex of the token
  id: string; // inv_<ulid>
  /** Only this address may use it; null: any. */
  email: string | null;
  createdBy: string; // user id
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface InvitationUseDoc {
  _id: string; // the invitation id
  accountId: string;
  usedAt: Date;
}

export class InvitationsRepo {
  private readonly col: Collection<InvitationDoc>;
  private readonly uses: Collection<InvitationUseDoc>;

  constructor(db: Db) {
    this.col = db.collection('invitations');
    this.uses = db.collection('invitationUses');
  }

  async insert(doc: InvitationDoc, stamp?: Stamp): Promise<void> {
    await stamp?.intend(this.col, doc._id);
    await this.col.insertOne(stamp ? stamp.insert(doc) : doc);
    stamp?.landed();
  }

  byId(invitationId: string): Promise<InvitationDoc | null> {
    return this.col.findOne({ id: invitationId });
  }

  byHash(hash: string): Promise<InvitationDoc | null> {
    return this.col.findOne({ _id: hash });
  }

  use(invitationId: string): Promise<InvitationUseDoc | null> {
    return this.uses.findOne({ _id: invitationId });
  }

  /** Claims the invitation for an account: true for the one caller whose insert won. */
  claimUse(doc: InvitationUseDoc): Promise<boolean> {
    return insertUnique(this.uses, doc);
  }

  /** Undoes `claimUse` for a sign-up that did not go ahead. */
  async releaseUse(invitationId: string): Promise<void> {
    await this.uses.deleteOne({ _id: invitationId });
  }

  /** Every invitation with its use, newest first (administration; not a hot path). */
  async list(): Promise<{ invitation: InvitationDoc; use: InvitationUseDoc | null }[]> {
    const [invitations, uses] = await Promise.all([this.col.find({}).sort({ createdAt: -1, id: -1 }).toArray(), this.uses.find({}).toArray()]);
    return invitations.map((invitation) => ({ invitation, use: uses.find((u) => u._id === invitation.id) ?? null }));
  }

  /** Withdraws a pending invitation: as it is after, and whether this call withdrew it (false: another did first). */
  async revoke(doc: InvitationDoc, now: Date, stamp?: Stamp): Promise<{ doc: InvitationDoc; changed: boolean }> {
    await stamp?.intend(this.col, doc._id);
    const update = { $set: { revokedAt: now } };
    const after = await this.col.findOneAndUpdate({ _id: doc._id, revokedAt: null }, stamp ? stamp.update(update) : update, { returnDocument: 'after' });
    if (after) stamp?.landed();
    return after ? { doc: after, changed: true } : { doc: (await this.col.findOne({ _id: doc._id })) ?? doc, changed: false };
  }
}
