// Accounts, users and the email → user claim. The claim's `_id` is the
// normalised email, so "email already used" is decided by a unique insert
// (atomic on FerretDB and MongoDB) and sign-in is a point read.
import type { Collection, Db } from 'mongodb';
import type { PlanName } from '../config.js';
import { isDuplicateKey } from './errors.js';

export interface AccountDoc {
  _id: string; // acc_<ulid>
  plan: PlanName;
  createdAt: Date;
}

export interface UserDoc {
  _id: string; // usr_<ulid>
  email: string;
  name: string | null;
  accountId: string;
  passwordHash: string;
  createdAt: Date;
}

interface EmailClaimDoc {
  _id: string; // normalised email
  userId: string;
}

export class AccountsRepo {
  private readonly accounts: Collection<AccountDoc>;
  private readonly users: Collection<UserDoc>;
  private readonly emails: Collection<EmailClaimDoc>;

  constructor(db: Db) {
    this.accounts = db.collection('accounts');
    this.users = db.collection('users');
    this.emails = db.collection('emails');
  }

  /** Claims the email; false when it is already taken. */
  async claimEmail(email: string, userId: string): Promise<boolean> {
    try {
      await this.emails.insertOne({ _id: email, userId });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async insertAccountAndUser(account: AccountDoc, user: UserDoc): Promise<void> {
    await this.accounts.insertOne(account);
    await this.users.insertOne(user);
  }

  async userByEmail(email: string): Promise<UserDoc | null> {
    const claim = await this.emails.findOne({ _id: email });
    return claim ? this.users.findOne({ _id: claim.userId }) : null;
  }

  user(id: string): Promise<UserDoc | null> {
    return this.users.findOne({ _id: id });
  }

  account(id: string): Promise<AccountDoc | null> {
    return this.accounts.findOne({ _id: id });
  }

  async setPlan(accountId: string, plan: PlanName): Promise<AccountDoc | null> {
    return this.accounts.findOneAndUpdate({ _id: accountId }, { $set: { plan } }, { returnDocument: 'after' });
  }
}
