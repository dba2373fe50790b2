// The members of an account: their roles, invitations to join, removal.
// Who may call what is the routes' `role` metadata (the auth middleware);
// what is decided here is about the data: an account keeps an owner, nobody
// grants a role above their own, an invitation admits one member.
import { monotonicFactory } from 'ulid';
import { MEMBER_INVITATION_DAYS } from '../../contract/members.js';
import type { Role } from '../../contract/common.js';
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/index.js';
import type { MemberDoc } from '../store/members.js';
import type { MemberInvitationDoc, MemberInvitationUseDoc } from '../store/memberInvitations.js';
import type { UserDoc } from '../store/accounts.js';
import { mayGrant } from './access.js';
import { memberInvitationState, newInvitationToken, parseInvitationToken } from './invitationToken.js';
import { INVITATION_PROBLEMS, type InvitationState } from './signupPolicy.js';

export const MEMBER_INVITATION_TTL_MS = MEMBER_INVITATION_DAYS * 24 * 3600_000;

const lastOwner = () => new ApiError('last_owner');
const memberNotFound = () => new ApiError('member_not_found');
const alreadyMember = () => new ApiError('already_member');
const invitationRefused = (state: Exclude<InvitationState, 'valid'>) =>
  new ApiError(state === 'used' ? 'invitation_used' : 'signup_not_allowed', INVITATION_PROBLEMS[state]);

const memberView = (m: MemberDoc, u: UserDoc | undefined) => ({
  userId: m.userId,
  email: u?.email ?? '',
  name: u?.name ?? null,
  role: m.role,
  joinedAt: m.joinedAt.toISOString(),
});

const invitationView = (i: MemberInvitationDoc, use: MemberInvitationUseDoc | null, now: Date) => ({
  id: i._id,
  email: i.email,
  role: i.role,
  status: use ? ('used' as const) : i.revokedAt ? ('revoked' as const) : i.expiresAt <= now ? ('expired' as const) : ('pending' as const),
  createdAt: i.createdAt.toISOString(),
  expiresAt: i.expiresAt.toISOString(),
  usedAt: use?.usedAt.toISOString() ?? null,
});

export class MembersService {
  /** Invitation ids in creation order, also within one millisecond (they are listed newest first). */
  private readonly ulid = monotonicFactory();

  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  private now = () => new Date(this.clock.now());

  async list(accountId: string) {
    const members = await this.store.members.ofAccount(accountId);
    const users = await this.store.accounts.usersByIds(members.map((m) => m.userId));
    return members.map((m) =>
      memberView(
        m,
        users.find((u) => u._id === m.userId),
      ),
    );
  }

  private async view(m: MemberDoc) {
    return memberView(m, (await this.store.accounts.usersByIds([m.userId]))[0]);
  }

  /**
   * Changes a member's role. Demoting an owner first counts the owners, then
   * counts again after the write: two owners demoting each other at once in
   * two processes both see 0 afterwards and both put their change back.
   */
  async changeRole(accountId: string, userId: string, role: Role) {
    const member = await this.store.members.get(accountId, userId);
    if (!member) throw memberNotFound();
    if (member.role === role) return this.view(member);
    const demotesOwner = member.role === 'owner';
    if (demotesOwner && (await this.store.members.countOwners(accountId)) <= 1) throw lastOwner();
    const before = await this.audit.change(
      accountId,
      'member.role',
      { target: { type: 'member', id: userId }, before: { role: member.role }, after: { role } },
      async (stamp) => {
        const before = await this.store.members.setRole(accountId, userId, role, stamp);
        if (before && demotesOwner && (await this.store.members.countOwners(accountId)) === 0) {
          await this.store.members.restoreRole(accountId, userId, before.role, stamp);
          throw lastOwner();
        }
        return before;
      },
    );
    if (!before) throw memberNotFound();
    return this.view({ ...before, role });
  }

  /**
   * Removes a member; their sessions in this account end at once (and the
   * auth middleware refuses any other at its next request), and so do the
   * account's pending invitations to their email: any would let them back in
   * with its role.
   */
  async remove(accountId: string, userId: string) {
    const member = await this.store.members.get(accountId, userId);
    if (!member) throw memberNotFound();
    if (member.role === 'owner' && (await this.store.members.countOwners(accountId)) <= 1) throw lastOwner();
    const view = await this.view(member);
    const removed = await this.audit.change(
      accountId,
      'member.remove',
      { target: { type: 'member', id: userId }, before: { email: view.email, role: member.role } },
      async (stamp) => {
        const removed = await this.store.members.remove(accountId, userId, stamp);
        if (removed?.role === 'owner' && (await this.store.members.countOwners(accountId)) === 0) {
          await this.store.members.restore(removed);
          throw lastOwner();
        }
        if (removed) await this.store.sessions.deleteInAccount(userId, accountId);
        return removed;
      },
    );
    if (!removed) throw memberNotFound();
    for (const invitation of await this.store.memberInvitations.pendingFor(accountId, view.email, this.now())) await this.revokeOne(invitation, this.now());
    return view;
  }

  /**
   * A new invitation by a member with `inviterRole`; its token appears only
   * in the returned URL. None for a member's own email: accepting it is
   * refused while they are a member, so it would stay pending, and admit
   * them again with its role once removed.
   */
  async invite(accountId: string, inviter: { userId: string; role: Role }, email: string, role: Role) {
    if (!mayGrant(inviter.role, role)) throw new ApiError('role_not_allowed', 'You cannot grant a role above your own');
    const invitee = await this.store.accounts.userByEmail(email);
    if (invitee && (await this.store.members.get(accountId, invitee._id))) throw alreadyMember();
    const now = this.now();
    const id = this.ulid(now.getTime());
    const { token, secretHash } = newInvitationToken(id);
    const doc: MemberInvitationDoc = {
      _id: `minv_${id}`,
      accountId,
      email,
      role,
      secretHash,
      createdBy: inviter.userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + MEMBER_INVITATION_TTL_MS),
      revokedAt: null,
    };
    await this.audit.change(accountId, 'member.invite', { target: { type: 'invitation', id: doc._id }, after: { email, role } }, (stamp) =>
      this.store.memberInvitations.insert(doc, stamp),
    );
    return { invitation: invitationView(doc, null, now), url: `${this.config.baseUrl}/login?invite=${token}` };
  }

  async invitations(accountId: string) {
    const now = this.now();
    return (await this.store.memberInvitations.ofAccount(accountId)).map(({ invitation, use }) => invitationView(invitation, use, now));
  }

  async revokeInvitation(accountId: string, invitationId: string) {
    const now = this.now();
    const found = await this.store.memberInvitations.get(invitationId);
    if (found?.accountId !== accountId) throw new ApiError('invitation_not_found');
    // Withdrawn by this call, or already before (repeating answers the same).
    const revoked = found.revokedAt ? null : await this.revokeOne(found, now);
    const doc = revoked ?? (await this.store.memberInvitations.get(invitationId)) ?? found;
    return invitationView(doc, await this.store.memberInvitations.use(doc._id), now);
  }

  /** Withdraws the invitation unless it already was: the invitation after, null when this call changed nothing. */
  private revokeOne(invitation: MemberInvitationDoc, now: Date) {
    return this.audit.change(
      invitation.accountId,
      'member.invitation_revoke',
      { target: { type: 'invitation', id: invitation._id }, after: { email: invitation.email, role: invitation.role } },
      (stamp) => this.store.memberInvitations.revoke(invitation.accountId, invitation._id, now, stamp),
    );
  }

  /**
   * Checks a presented invitation for `email` (403 with the reason when it
   * is not valid) without using it: sign-up checks before it claims the email.
   */
  async check(token: string, email: string): Promise<MemberInvitationDoc> {
    const parsed = parseInvitationToken(token);
    if (!parsed) throw invitationRefused('unknown');
    const found = await this.store.memberInvitations.get(parsed.id);
    const used = found !== null && (await this.store.memberInvitations.use(found._id)) !== null;
    const state = memberInvitationState(parsed.secret, found, used, email, this.now());
    if (state !== 'valid') throw invitationRefused(state);
    return found!;
  }

  /**
   * Uses a checked invitation for `user`: they join its account with its
   * role. The use is claimed first (one of simultaneous acceptances wins);
   * someone already a member gives it back.
   */
  async join(invitation: MemberInvitationDoc, user: UserDoc): Promise<MemberDoc> {
    const now = this.now();
    if (!(await this.store.memberInvitations.claimUse({ _id: invitation._id, userId: user._id, usedAt: now }))) {
      throw new ApiError('invitation_used');
    }
    const member: MemberDoc = {
      _id: `${invitation.accountId}|${user._id}`,
      accountId: invitation.accountId,
      userId: user._id,
      role: invitation.role,
      joinedAt: now,
    };
    const added = await this.audit.change(
      invitation.accountId,
      'member.join',
      { target: { type: 'member', id: user._id }, after: { email: user.email, role: invitation.role, invitation: invitation._id } },
      (stamp) => this.store.members.add(member, stamp),
      { actor: { type: 'user', id: user._id, label: user.email } },
    );
    if (!added) {
      await this.store.memberInvitations.releaseUse(invitation._id);
      throw alreadyMember();
    }
    return member;
  }
}
