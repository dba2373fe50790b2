// What the instance's administrator does: invite people to sign up, and
// assign plans. Routes reach this only through the `admin` auth kind.
import { createHash, randomBytes } from 'node:crypto';
import { ulid } from '../ids.js';
import type { Clock } from '../clock.js';
import type { Config, PlanName } from '../config.js';
import { ApiError } from '../errors.js';
import type { AccountDoc } from '../store/accounts.js';
import type { InvitationDoc, InvitationUseDoc } from '../store/invitations.js';
import type { Store } from '../store/index.js';
import type { AuditLog } from '../audit/log.js';
import type { Session } from './service.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

const invitationView = (i: InvitationDoc, use: InvitationUseDoc | null, now: Date) => ({
  id: i.id,
  email: i.email,
  status: use ? ('used' as const) : i.revokedAt ? ('revoked' as const) : i.expiresAt <= now ? ('expired' as const) : ('pending' as const),
  createdAt: i.createdAt.toISOString(),
  expiresAt: i.expiresAt.toISOString(),
  usedAt: use?.usedAt.toISOString() ?? null,
});

const adminAccountView = (a: AccountDoc & { emails: string[] }, adminId: string | null) => ({
  id: a._id,
  plan: a.plan,
  emails: a.emails,
  admin: a._id === adminId,
  createdAt: a.createdAt.toISOString(),
});

export class AdminService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  private now = () => new Date(this.clock.now());

  /** A new invitation; its token appears only in the returned URL and is stored hashed. */
  async invite(session: Session, email: string | undefined) {
    const now = this.now();
    const token = randomBytes(24).toString('base64url');
    const doc: InvitationDoc = {
      _id: createHash('sha256').update(token).digest('hex'),
      id: `inv_${ulid()}`,
      email: email ?? null,
      createdBy: session.userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
      revokedAt: null,
    };
    await this.audit.change(
      session.accountId,
      'instance.invitation_create',
      { target: { type: 'invitation', id: doc.id }, after: { email: doc.email } },
      (stamp) => this.store.invitations.insert(doc, stamp),
    );
    return { invitation: invitationView(doc, null, now), url: `${this.config.baseUrl}/login?invite=${token}` };
  }

  async invitations() {
    const now = this.now();
    return (await this.store.invitations.list()).map(({ invitation, use }) => invitationView(invitation, use, now));
  }

  async revokeInvitation(session: Session, invitationId: string) {
    const found = await this.store.invitations.byId(invitationId);
    if (!found) throw new ApiError('invitation_not_found');
    // A repeated revocation changes nothing: recorded once, when it happened.
    const doc = found.revokedAt
      ? found
      : (
          await this.audit.change(
            session.accountId,
            'instance.invitation_revoke',
            { target: { type: 'invitation', id: found.id }, after: { email: found.email } },
            (stamp) => this.store.invitations.revoke(found, this.now(), stamp),
          )
        ).doc;
    return invitationView(doc, await this.store.invitations.use(doc.id), this.now());
  }

  /** Every account with its members' emails. */
  async accounts() {
    const [accounts, members, adminId] = await Promise.all([
      this.store.accounts.listAccounts(),
      this.store.members.all(),
      this.store.accounts.adminAccountId(this.now()),
    ]);
    const users = await this.store.accounts.usersByIds([...new Set(members.map((m) => m.userId))]);
    const emailsOf = (accountId: string) =>
      members.filter((m) => m.accountId === accountId).flatMap((m) => users.filter((u) => u._id === m.userId).map((u) => u.email));
    return accounts.map((a) => adminAccountView({ ...a, emails: emailsOf(a._id) }, adminId));
  }

  async setPlan(accountId: string, plan: PlanName) {
    const before = await this.store.accounts.account(accountId);
    if (!before) throw new ApiError('account_not_found');
    const account =
      before.plan === plan
        ? await this.store.accounts.setPlan(accountId, plan)
        : await this.audit.change(
            accountId,
            'plan.change',
            { target: { type: 'account', id: accountId }, before: { plan: before.plan }, after: { plan } },
            (stamp) => this.store.accounts.setPlan(accountId, plan, stamp),
          );
    if (!account) throw new ApiError('account_not_found');
    const [members, adminId] = await Promise.all([this.store.members.ofAccount(accountId), this.store.accounts.adminAccountId(this.now())]);
    const emails = (await this.store.accounts.usersByIds(members.map((m) => m.userId))).map((u) => u.email);
    return adminAccountView({ ...account, emails }, adminId);
  }
}
