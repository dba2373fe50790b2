// The only door to MongoDB. Modules call the typed repositories hanging off
// Store; nothing outside server/store/ imports the driver.
import { MongoClient, type Db } from 'mongodb';
import { AccountsRepo } from './accounts.js';
import { ApiKeysRepo } from './apiKeys.js';
import { EventsRepo } from './events.js';
import { FingerprintsRepo } from './fingerprints.js';
import { GrantsRepo } from './grants.js';
import { LoginThrottleRepo } from './loginThrottle.js';
import { ProjectsRepo } from './projects.js';
import { SessionsRepo } from './sessions.js';
import { UsageRepo } from './usage.js';
import { VisitorsRepo } from './visitors.js';
import { VisitsRepo } from './visits.js';

export interface StoreOptions {
  uri: string;
  dbName: string;
}

export class Store {
  readonly apiKeys: ApiKeysRepo;
  readonly accounts: AccountsRepo;
  readonly sessions: SessionsRepo;
  readonly projects: ProjectsRepo;
  readonly usage: UsageRepo;
  readonly loginThrottle: LoginThrottleRepo;
  readonly fingerprints: FingerprintsRepo;
  readonly visitors: VisitorsRepo;
  readonly events: EventsRepo;
  readonly visits: VisitsRepo;
  readonly grants: GrantsRepo;

  private constructor(
    private readonly client: MongoClient,
    readonly db: Db,
  ) {
    this.apiKeys = new ApiKeysRepo(db);
    this.accounts = new AccountsRepo(db);
    this.sessions = new SessionsRepo(db);
    this.projects = new ProjectsRepo(db);
    this.usage = new UsageRepo(db);
    this.loginThrottle = new LoginThrottleRepo(db);
    this.fingerprints = new FingerprintsRepo(db);
    this.visitors = new VisitorsRepo(db);
    this.events = new EventsRepo(db);
    this.visits = new VisitsRepo(db);
    this.grants = new GrantsRepo(db);
  }

  /** Connects and creates indexes; fails fast when the server does not answer. */
  static async open({ uri, dbName }: StoreOptions): Promise<Store> {
    const client = new MongoClient(uri, {
      serverSelectionTimeoutMS: 5_000,
      connectTimeoutMS: 5_000,
      // FerretDB v1 mishandles w:0 and retryable writes need a replica set anyway;
      // we never rely on either.
      retryWrites: false,
      appName: 'deviceid',
    });
    await client.connect();
    const store = new Store(client, client.db(dbName));
    await store.ensureIndexes();
    return store;
  }

  private async ensureIndexes(): Promise<void> {
    await Promise.all([this.apiKeys.ensureIndexes(), this.projects.ensureIndexes()]);
  }

  /** Readiness: true when the server answers a ping within `timeoutMs`. */
  async ping(timeoutMs = 1_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const ping = this.db
      .command({ ping: 1 })
      .then((r) => r.ok === 1)
      .catch(() => false);
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** Tests only: drop the whole database. */
  async dropDatabase(): Promise<void> {
    await this.db.dropDatabase();
  }
}
