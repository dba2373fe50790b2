// What the instance's administrator does: invite people to sign up, and
// assign plans. Routes reach this only through the `admin` auth kind.
import { createHash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { Clock } from '../clock.js';
import type { Config, PlanName } from '../config.js';
import { ApiError } from '../errors.js';
import type { AccountDoc } from '../store/accounts.js';
import type { InvitationDoc, InvitationUseDoc } from '../store/invitations.js';
import type { Store } from '../store/index.js';
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
    await this.store.invitations.insert(doc);
    return { invitation: invitationView(doc, null, now), url: `${this.config.baseUrl}/login?invite=${token}` };
  }

  async invitations() {
    const now = this.now();
    return (await this.store.invitations.list()).map(({ invitation, use }) => invitationView(invitation, use, now));
  }

  async revokeInvitation(invitationId: string) {
    const doc = await this.store.invitations.revoke(invitationId, this.now());
    if (!doc) throw new ApiError('invitation_not_found');
    return invitationView(doc, await this.store.invitations.use(doc.id), this.now());
  }

  async accounts() {
    const [accounts, adminId] = await Promise.all([this.store.accounts.listAccounts(), this.store.accounts.adminAccountId(this.now())]);
    return accounts.map((a) => adminAccountView(a, adminId));
  }

  async setPlan(accountId: string, plan: PlanName) {
    const account = await this.store.accounts.setPlan(accountId, plan);
    if (!account) throw new ApiError('account_not_found');
    const [emails, adminId] = await Promise.all([this.store.accounts.emailsOf(accountId), this.store.accounts.adminAccountId(this.now())]);
    return adminAccountView({ ...account, emails }, adminId);
  }
}
