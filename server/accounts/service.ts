// Sign-up, sign-in, sessions and the account view.
import { createHash, randomBytes } from 'node:crypto';
import type { MonthUsage } from '../store/usage.js';
import { ulid } from '../ids.js';
import { ACCOUNT_LIMITS } from '../../contract/account.js';
import type { Clock } from '../clock.js';
import { PLAN_NAMES, type Config, type PlanName } from '../config.js';
import { ApiError } from '../errors.js';
import { dayOf, daysInPeriod, periodOf } from '../metering/period.js';
import type { Role } from '../../contract/common.js';
import type { AuditLog } from '../audit/log.js';
import type { AccountDoc, UserDoc } from '../store/accounts.js';
import { memberId, type MemberDoc } from '../store/members.js';
import { isMemberInvitationToken } from './invitationToken.js';
import type { MembersService } from './members.js';
import type { Store } from '../store/index.js';
import { ipLimitKey } from '../edge/address.js';
import type { PasswordChecker } from './passwordChecker.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from './passwords.js';
import { invitationState, signupRefusal } from './signupPolicy.js';
import { knownDevice, knownDeviceCookie, signInLimits } from './throttle.js';
import { accountView, userView } from './views.js';

export const SESSION_COOKIE = 'deviceid_session';
export const SESSION_TTL_MS = 30 * 24 * 3600_000;

/** Sign-ups from one address (IPv6: one /64) per hour: SIGNUPS_PER_IP_PER_HOUR. */
export const SIGNUP_WINDOW_MS = 3600_000;

export interface Session {
  id: string; // hash of the cookie value
  userId: string;
  /** The current account: where session routes without an `:accountId` act. */
  accountId: string;
}

export interface SignupRequest {
  email: string;
  password: string;
  name?: string | undefined;
  invitation?: string | undefined;
}

const hashToken = (t: string) => createHash('sha256').update(t).digest('hex');

const tooMany = (message: string, retryAfterMs: number) =>
  new ApiError('too_many_attempts', message, {}, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) });

export class AccountsService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly clock: Clock,
    /** Usage as identify counts it (metering/meter.ts). */
    private readonly usageOf: (accountId: string, period: string) => Promise<MonthUsage>,
    private readonly members: MembersService,
    private readonly audit: AuditLog,
    private readonly passwords: PasswordChecker,
  ) {}

  /**
   * Guard clauses in an order that reveals nothing and spends no CPU on a
   * request that would be refused anyway: the per-address limit, whether
   * sign-up is open to this request (mode, first account, invitation), the
   * password's strength (zxcvbn, costly on hostile input), and only then
   * whether the email is taken.
   */
  async signup({ email, password, name, invitation }: SignupRequest, ip: string) {
    const now = new Date(this.clock.now());
    const perIp = { key: `signup:ip:${ipLimitKey(ip)}`, max: this.config.signup.perIpPerHour, windowMs: SIGNUP_WINDOW_MS };
    const limited = await this.store.attempts.takeAll([perIp], now);
    if (!limited.ok) throw tooMany('Too many sign-ups from this address; try again later', limited.retryAfterMs);

    if (invitation && isMemberInvitationToken(invitation)) return this.signupToJoin({ email, password, name }, invitation, now);

    const firstAccount = (await this.store.accounts.adminAccountId(now)) === null;
    const invited = invitation ? await this.store.invitations.byHash(hashToken(invitation)) : null;
    const used = invited !== null && (await this.store.invitations.use(invited.id)) !== null;
    const state = invitationState(Boolean(invitation), invited, used, email, now);
    const refusal = signupRefusal(this.config.signup.mode, firstAccount, state);
    if (refusal) throw new ApiError(refusal.code, refusal.text);
    await this.checkStrength(password, [email, name]);

    const account: AccountDoc = { _id: `acc_${ulid()}`, plan: 'free', createdAt: now };
    const user: UserDoc = {
      _id: `usr_${ulid()}`,
      email,
      name: name || null,
      accountId: account._id,
      passwordHash: await hashPassword(password),
      createdAt: now,
    };
    // Unique claims decide under concurrency: who uses the invitation, who gets the email, who administers.
    const usedInvitation = state === 'valid' ? invited : null;
    if (usedInvitation && !(await this.store.invitations.claimUse({ _id: usedInvitation.id, accountId: account._id, usedAt: now }))) {
      throw new ApiError('invitation_used');
    }
    if (!(await this.store.accounts.claimEmail(email, user._id))) {
      if (usedInvitation) await this.store.invitations.releaseUse(usedInvitation.id);
      throw new ApiError('email_taken');
    }
    if (firstAccount && !(await this.store.accounts.claimAdmin(account._id, now))) {
      // Another first sign-up won the race: this one goes ahead only if it would without being first.
      const late = signupRefusal(this.config.signup.mode, false, state);
      if (late) {
        await this.store.accounts.releaseEmail(email, user._id);
        throw new ApiError(late.code, late.text);
      }
    }
    const self = { actor: { type: 'user' as const, id: user._id, label: email } };
    await this.audit.change(
      account._id,
      'account.create',
      { target: { type: 'account', id: account._id }, after: { email, plan: account.plan } },
      async (stamp) => {
        await this.store.accounts.insertAccountAndUser(account, user, stamp);
        // The one who signs up owns the account.
        await this.store.members.add({ _id: memberId(account._id, user._id), accountId: account._id, userId: user._id, role: 'owner', joinedAt: now });
        await this.store.projects.insert({
          _id: `prj_${ulid()}`,
          accountId: account._id,
          name: 'Default project',
          allowedDomains: [],
          createdAt: now,
        });
      },
      self,
    );
    return { user, account, role: 'owner' as const, ...(await this.signedIn(user, account._id)) };
  }

  /**
   * Sign-up with an invitation to an existing account: a new user who joins
   * it with the invitation's role (no account of their own). Admitted in
   * every SIGNUP mode, since a member invited them; the invitation is for
   * this email only.
   */
  private async signupToJoin({ email, password, name }: Omit<SignupRequest, 'invitation'>, token: string, now: Date) {
    const invitation = await this.members.check(token, email);
    await this.checkStrength(password, [email, name]);
    const user: UserDoc = {
      _id: `usr_${ulid()}`,
      email,
      name: name || null,
      accountId: invitation.accountId,
      passwordHash: await hashPassword(password),
      createdAt: now,
    };
    if (!(await this.store.accounts.claimEmail(email, user._id))) throw new ApiError('email_taken');
    await this.store.accounts.insertUser(user);
    let member: MemberDoc;
    try {
      member = await this.members.join(invitation, user);
    } catch (err) {
      // Someone else used the invitation meanwhile: no user is left behind without an account.
      await this.store.accounts.removeUser(user._id, email);
      throw err;
    }
    const account = await this.mustAccount(member.accountId);
    return { user, account, role: member.role, ...(await this.signedIn(user, account._id)) };
  }

  private async checkStrength(password: string, personal: (string | undefined)[]): Promise<void> {
    const weakness = await this.passwords.weakness(password, personal);
    if (weakness) throw new ApiError('weak_password', `password: ${weakness}`);
  }

  private async signedIn(user: UserDoc, accountId: string) {
    return { token: await this.startSession(user, accountId), knownDevice: knownDeviceCookie(this.config.serverSecret, user.email) };
  }

  /**
   * Each attempt first takes a slot of every limit it counts against
   * (throttle.ts), so concurrent guesses never evaluate more passwords than
   * the limits allow; a success gives its slots back.
   */
  async login(email: string, password: string, client: { ip: string; knownDevice: unknown }, invitation?: string) {
    const now = new Date(this.clock.now());
    const device = knownDevice(this.config.serverSecret, email, client.knownDevice);
    const taken = await this.store.attempts.takeAll(signInLimits(email, ipLimitKey(client.ip), device), now);
    if (!taken.ok) throw tooMany('Too many failed sign-in attempts; try again later', taken.retryAfterMs);
    const user = await this.store.accounts.userByEmail(email);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) {
      // Recorded in each account of the user it was aimed at (an unknown email belongs to no account).
      for (const m of user ? await this.store.members.ofUser(user._id) : []) {
        await this.audit.record(m.accountId, 'auth.login_failed', { target: { type: 'user', id: m.userId }, after: { email } });
      }
      throw new ApiError('invalid_credentials');
    }
    await this.store.attempts.release(taken.slots);
    const self = { actor: { type: 'user' as const, id: user._id, label: user.email } };
    let joined: MemberDoc | null = null;
    if (invitation) joined = await this.members.join(await this.members.check(invitation, user.email), user);
    const memberships = await this.store.members.ofUser(user._id);
    // Where the user last worked, else their oldest account.
    const member = joined ?? memberships.find((m) => m.accountId === user.accountId) ?? memberships[0];
    if (!member) throw new ApiError('no_account');
    const account = await this.mustAccount(member.accountId);
    await this.audit.record(account._id, 'auth.login', { target: { type: 'user', id: user._id } }, self);
    return { user, account, role: member.role, ...(await this.signedIn(user, account._id)) };
  }

  private async startSession(user: UserDoc, accountId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    if (user.accountId !== accountId) await this.store.accounts.setLastAccount(user._id, accountId);
    await this.store.sessions.insert({
      _id: hashToken(token),
      userId: user._id,
      accountId,
      createdAt: new Date(now),
      expiresAt: new Date(now + SESSION_TTL_MS),
    });
    await this.store.sessions.keepNewest(user._id, ACCOUNT_LIMITS.sessionsPerUser);
    return token;
  }

  /**
   * The session of a cookie value. cookie-parser turns `j:`-prefixed values
   * into JSON (objects, arrays, numbers), so anything but a string is no session.
   */
  async sessionFromCookie(token: unknown): Promise<Session | null> {
    if (typeof token !== 'string' || !token || token.length > 100) return null;
    const doc = await this.store.sessions.findLive(hashToken(token), new Date(this.clock.now()));
    return doc ? { id: doc._id, userId: doc.userId, accountId: doc.accountId } : null;
  }

  async logout(session: Session): Promise<void> {
    await this.store.sessions.delete(session.id);
  }

  /** The session's user, current account and role in it (`member`: the membership the auth middleware read). */
  async view(session: Session, member: MemberDoc) {
    const user = await this.store.accounts.user(session.userId);
    if (!user) throw new ApiError('not_signed_in');
    const account = await this.mustAccount(session.accountId);
    return this.sessionView(user, account, member.role);
  }

  async sessionView(user: UserDoc, account: AccountDoc, role: Role) {
    return { user: userView(user), account: await this.accountView(account), role };
  }

  /** The accounts the user belongs to, oldest membership first. */
  async myAccounts(session: Session) {
    const memberships = await this.store.members.ofUser(session.userId);
    const accounts = await this.store.accounts.accountsByIds(memberships.map((m) => m.accountId));
    return memberships.flatMap((m) => {
      const a = accounts.find((x) => x._id === m.accountId);
      return a ? [{ id: a._id, plan: a.plan, role: m.role, current: a._id === session.accountId, joinedAt: m.joinedAt.toISOString() }] : [];
    });
  }

  /** Makes another of the user's accounts current, in this session and for their next sign-in. */
  async switchAccount(session: Session, accountId: string) {
    const member = await this.store.members.get(accountId, session.userId);
    if (!member) throw new ApiError('account_not_found');
    await this.store.sessions.setAccount(session.id, accountId);
    await this.store.accounts.setLastAccount(session.userId, accountId);
    return this.view({ ...session, accountId }, member);
  }

  /** Joins an account with an invitation while signed in; it becomes the current account. */
  async acceptInvitation(session: Session, token: string) {
    const user = await this.store.accounts.user(session.userId);
    if (!user) throw new ApiError('not_signed_in');
    const member = await this.members.join(await this.members.check(token, user.email), user);
    return this.switchAccount(session, member.accountId);
  }

  async accountView(account: AccountDoc) {
    const period = periodOf(this.clock.now());
    const [{ count }, admin] = await Promise.all([this.usageOf(account._id, period), this.isAdmin(account._id)]);
    return accountView(account, this.config.plans, { period, count }, { admin, canChangePlan: admin || this.config.planSelfService });
  }

  /**
   * Usage of a month per day: up to today for the current month, every day of
   * a past one. A month that has not started is refused rather than answered
   * with zeros, which would read as "no traffic".
   */
  async usage(session: Session, period?: string) {
    const now = this.clock.now();
    const current = periodOf(now);
    const month = period ?? current;
    if (month > current) throw new ApiError('validation_failed', 'period: must not be after the current month');
    const account = await this.mustAccount(session.accountId);
    const { count, days, testCount, testDays } = await this.usageOf(account._id, month);
    const lastDay = month === current ? Number(dayOf(now)) : daysInPeriod(month);
    return {
      period: month,
      limit: this.config.plans[account.plan].monthly,
      count,
      testCount,
      days: Array.from({ length: lastDay }, (_, i) => {
        const dd = String(i + 1).padStart(2, '0');
        return { date: `${month}-${dd}`, count: days[dd] ?? 0, test: testDays[dd] ?? 0 };
      }),
    };
  }

  /** Every plan with the limits this instance applies (config.plans: the defaults and PLANS). */
  plans() {
    return PLAN_NAMES.map((name) => ({ name, rps: this.config.plans[name].rps, monthly: this.config.plans[name].monthly }));
  }

  /** Whether the account administers the instance. */
  async isAdmin(accountId: string): Promise<boolean> {
    return (await this.store.accounts.adminAccountId(new Date(this.clock.now()))) === accountId;
  }

  async setPlan(session: Session, plan: PlanName) {
    if (!this.config.planSelfService && !(await this.isAdmin(session.accountId))) {
      throw new ApiError('plan_change_not_allowed');
    }
    const before = await this.mustAccount(session.accountId);
    const id = session.accountId;
    const account =
      before.plan === plan
        ? await this.store.accounts.setPlan(id, plan)
        : await this.audit.change(id, 'plan.change', { target: { type: 'account', id }, before: { plan: before.plan }, after: { plan } }, (stamp) =>
            this.store.accounts.setPlan(id, plan, stamp),
          );
    if (!account) throw new ApiError('not_signed_in');
    return this.accountView(account);
  }

  private async mustAccount(id: string): Promise<AccountDoc> {
    const account = await this.store.accounts.account(id);
    if (!account) throw new Error(`account ${id} of an existing user is missing`);
    return account;
  }
}
