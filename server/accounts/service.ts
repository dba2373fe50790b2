// Sign-up, sign-in, sessions and the account view.
import { createHash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { Clock } from '../clock.js';
import type { Config, PlanName } from '../config.js';
import { ApiError } from '../errors.js';
import { dayOf, daysInPeriod, periodOf } from '../metering/period.js';
import type { AccountDoc, UserDoc } from '../store/accounts.js';
import type { Store } from '../store/index.js';
import { passwordWeakness } from './passwordPolicy.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from './passwords.js';
import { accountView, userView } from './views.js';

export const SESSION_COOKIE = 'deviceid_session';
export const SESSION_TTL_MS = 30 * 24 * 3600_000;

/** Sign-in throttling: failures per fixed window before 429. */
export const LOGIN_WINDOW_MS = 15 * 60_000;
export const LOGIN_MAX_FAILURES_PER_EMAIL = 5;
export const LOGIN_MAX_FAILURES_PER_IP = 20;

export interface Session {
  id: string; // hash of the cookie value
  userId: string;
  accountId: string;
}

const hashToken = (t: string) => createHash('sha256').update(t).digest('hex');

export class AccountsService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {}

  async signup(email: string, password: string, name: string | undefined) {
    const weakness = passwordWeakness(password, [email, name ?? '']);
    if (weakness) throw new ApiError(400, `password: ${weakness}`);
    const now = new Date(this.clock.now());
    const account: AccountDoc = { _id: `acc_${ulid()}`, plan: 'free', createdAt: now };
    const user: UserDoc = {
      _id: `usr_${ulid()}`,
      email,
      name: name || null,
      accountId: account._id,
      passwordHash: await hashPassword(password),
      createdAt: now,
    };
    // The unique claim decides who gets the email, even under concurrent sign-ups.
    if (!(await this.store.accounts.claimEmail(email, user._id))) {
      throw new ApiError(409, 'Email already registered');
    }
    await this.store.accounts.insertAccountAndUser(account, user);
    await this.store.projects.insert({
      _id: `prj_${ulid()}`,
      accountId: account._id,
      name: 'Default project',
      allowedDomains: [],
      createdAt: now,
    });
    return { user, account, token: await this.startSession(user) };
  }

  async login(email: string, password: string, ip: string) {
    const now = new Date(this.clock.now());
    const keys = [`email:${email}`, `ip:${ip}`] as const;
    const [byEmail, byIp] = await Promise.all(keys.map((k) => this.store.loginThrottle.failures(k, now, LOGIN_WINDOW_MS)));
    const blocked =
      byEmail!.count >= LOGIN_MAX_FAILURES_PER_EMAIL ? byEmail! : byIp!.count >= LOGIN_MAX_FAILURES_PER_IP ? byIp! : null;
    if (blocked) {
      const retry = Math.ceil((blocked.windowStart.getTime() + LOGIN_WINDOW_MS - now.getTime()) / 1000);
      throw new ApiError(429, 'Too many failed sign-in attempts; try again later', {}, { 'Retry-After': String(Math.max(1, retry)) });
    }
    const user = await this.store.accounts.userByEmail(email);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    if (!user || !ok) {
      await Promise.all(keys.map((k) => this.store.loginThrottle.recordFailure(k, now, LOGIN_WINDOW_MS)));
      throw new ApiError(401, 'Invalid email or password');
    }
    await this.store.loginThrottle.clear(keys[0]);
    const account = await this.mustAccount(user.accountId);
    return { user, account, token: await this.startSession(user) };
  }

  private async startSession(user: UserDoc): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.store.sessions.insert({
      _id: hashToken(token),
      userId: user._id,
      accountId: user.accountId,
      createdAt: new Date(now),
      expiresAt: new Date(now + SESSION_TTL_MS),
    });
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

  async view(session: Session) {
    const user = await this.store.accounts.user(session.userId);
    if (!user) throw new ApiError(401, 'Not signed in');
    const account = await this.mustAccount(session.accountId);
    return { user: userView(user), account: await this.accountView(account) };
  }

  async sessionView(user: UserDoc, account: AccountDoc) {
    return { user: userView(user), account: await this.accountView(account) };
  }

  async accountView(account: AccountDoc) {
    const period = periodOf(this.clock.now());
    const { count } = await this.store.usage.month(account._id, period);
    return accountView(account, this.config.plans, { period, count });
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
    if (month > current) throw new ApiError(400, 'period: must not be after the current month');
    const account = await this.mustAccount(session.accountId);
    const { count, days } = await this.store.usage.month(account._id, month);
    const lastDay = month === current ? Number(dayOf(now)) : daysInPeriod(month);
    return {
      period: month,
      limit: this.config.plans[account.plan].monthly,
      count,
      days: Array.from({ length: lastDay }, (_, i) => {
        const dd = String(i + 1).padStart(2, '0');
        return { date: `${month}-${dd}`, count: days[dd] ?? 0 };
      }),
    };
  }

  async setPlan(session: Session, plan: PlanName) {
    const account = await this.store.accounts.setPlan(session.accountId, plan);
    if (!account) throw new ApiError(401, 'Not signed in');
    return this.accountView(account);
  }

  private async mustAccount(id: string): Promise<AccountDoc> {
    const account = await this.store.accounts.account(id);
    if (!account) throw new Error(`account ${id} of an existing user is missing`);
    return account;
  }
}
