// Accounts, users and the email → user claim. The claim's `_id` is the
// normalised email, so "email already used" is decided by a unique insert
// (atomic on FerretDB and MongoDB) and sign-in is a point read.
import type { Collection, Db } from 'mongodb';
import type { PlanName } from '../config.js';
import type { Stamp } from './audit.js';
import { insertUnique } from './errors.js';
import { TtlCache, type CacheOptions } from './ttlCache.js';

export interface AccountDoc {
  _id: string; // acc_<ulid>
  plan: PlanName;
  createdAt: Date;
}

export interface UserDoc {
  _id: string; // usr_<ulid>
  email: string;
  name: string | null;
  /** The account the user last worked in: where a new session starts (if they are still a member; see members.ts). */
  accountId: string;
  passwordHash: string;
  createdAt: Date;
}

interface EmailClaimDoc {
  _id: string; // normalised email
  userId: string;
}

/** The instance's administrator: the account of the first user (claimed by a unique insert). */
interface AdminClaimDoc {
  _id: 'admin';
  accountId: string;
  claimedAt: Date;
}

export class AccountsRepo {
  private readonly accounts: Collection<AccountDoc>;
  private readonly users: Collection<UserDoc>;
  private readonly emails: Collection<EmailClaimDoc>;
  private readonly instance: Collection<AdminClaimDoc>;

  /** Accounts by id: identify reads the plan on every call. */
  private readonly cache: TtlCache<AccountDoc>;

  constructor(db: Db, cache: CacheOptions) {
    this.cache = new TtlCache(cache.ttlMs, cache.now);
    this.accounts = db.collection('accounts');
    this.users = db.collection('users');
    this.emails = db.collection('emails');
    this.instance = db.collection('instance');
  }

  /** Claims the email; false when it is already taken. */
  claimEmail(email: string, userId: string): Promise<boolean> {
    return insertUnique(this.emails, { _id: email, userId });
  }

  /** Undoes `claimEmail` for a sign-up that did not go ahead. */
  async releaseEmail(email: string, userId: string): Promise<void> {
    await this.emails.deleteOne({ _id: email, userId });
  }

  /** Makes the account the instance's administrator if there is none yet; true when it did. */
  claimAdmin(accountId: string, now: Date): Promise<boolean> {
    return insertUnique<AdminClaimDoc>(this.instance, { _id: 'admin', accountId, claimedAt: now });
  }

  /**
   * The administrator's account, or null on an instance without users. An
   * instance that had users before administrators existed gets its first
   * user's account as administrator.
   */
  async adminAccountId(now: Date): Promise<string | null> {
    const claim = await this.instance.findOne({ _id: 'admin' });
    if (claim) return claim.accountId;
    const [first] = await this.users.find({}).sort({ createdAt: 1, _id: 1 }).limit(1).toArray();
    if (!first) return null;
    await this.claimAdmin(first.accountId, now);
    return (await this.instance.findOne({ _id: 'admin' }))?.accountId ?? null;
  }

  /** Every account, oldest first (administration; not a hot path). */
  listAccounts(): Promise<AccountDoc[]> {
    return this.accounts.find({}).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  /** Users by id (those that exist). */
  usersByIds(ids: string[]): Promise<UserDoc[]> {
    return ids.length ? this.users.find({ _id: { $in: ids } }).toArray() : Promise.resolve([]);
  }

  accountsByIds(ids: string[]): Promise<AccountDoc[]> {
    return ids.length ? this.accounts.find({ _id: { $in: ids } }).toArray() : Promise.resolve([]);
  }

  /** `stamp`: an audited sign-up, made by the account's write. */
  async insertAccountAndUser(account: AccountDoc, user: UserDoc, stamp?: Stamp): Promise<void> {
    await stamp?.intend(this.accounts, account._id);
    await this.accounts.insertOne(stamp ? stamp.insert(account) : account);
    stamp?.landed();
    await this.users.insertOne(user);
  }

  /** A user who joins an existing account (an invitation to it). */
  async insertUser(user: UserDoc): Promise<void> {
    await this.users.insertOne(user);
  }

  /** Undoes `insertUser` and its email claim for a sign-up that did not go ahead. */
  async removeUser(userId: string, email: string): Promise<void> {
    await this.users.deleteOne({ _id: userId });
    await this.releaseEmail(email, userId);
  }

  /** Remembers the account the user works in, where their next session starts. */
  async setLastAccount(userId: string, accountId: string): Promise<void> {
    await this.users.updateOne({ _id: userId }, { $set: { accountId } });
  }

  async userByEmail(email: string): Promise<UserDoc | null> {
    const claim = await this.emails.findOne({ _id: email });
    return claim ? this.users.findOne({ _id: claim.userId }) : null;
  }

  user(id: string): Promise<UserDoc | null> {
    return this.users.findOne({ _id: id });
  }

  /** Cached (CACHE_TTL_MS). */
  account(id: string): Promise<AccountDoc | null> {
    return this.cache.get(id, () => this.accounts.findOne({ _id: id }));
  }

  async setPlan(accountId: string, plan: PlanName, stamp?: Stamp): Promise<AccountDoc | null> {
    this.cache.delete(accountId);
    await stamp?.intend(this.accounts, accountId);
    const update = { $set: { plan } };
    const doc = await this.accounts.findOneAndUpdate({ _id: accountId }, stamp ? stamp.update(update) : update, { returnDocument: 'after' });
    if (doc) stamp?.landed();
    this.cache.delete(accountId);
    return doc;
  }
}
