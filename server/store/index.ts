// The only door to MongoDB. Modules call the typed repositories hanging off
// Store; nothing outside server/store/ imports the driver.
import { MongoClient, MongoServerSelectionError, type Db } from 'mongodb';
import { DEFAULT_CACHE_TTL_MS, DEFAULT_DB_TIMEOUT_MS } from '../config.js';
import { DatabaseUnavailableError } from './errors.js';
import { Reachability } from './reachability.js';
import type { CacheOptions } from './ttlCache.js';
import { AccountsRepo } from './accounts.js';
import { ApiKeysRepo } from './apiKeys.js';
import { AttemptsRepo } from './attempts.js';
import { DeletionsRepo } from './deletions.js';
import { EventIndexRepo } from './eventIndex.js';
import { EventsRepo } from './events.js';
import { IdentityRepo } from './identity.js';
import { GrantsRepo } from './grants.js';
import { InvitationsRepo } from './invitations.js';
import { ListsRepo } from './lists.js';
import { MemberInvitationsRepo } from './memberInvitations.js';
import { MembersRepo } from './members.js';
import { AuditRepo } from './audit.js';
import { ClaimsRepo } from './claims.js';
import { RulesetsRepo } from './rulesets.js';
import { ProjectsRepo } from './projects.js';
import { ProxyStatsRepo } from './proxyStats.js';
import { SessionsRepo } from './sessions.js';
import { UsageRepo } from './usage.js';
import { RateRepo } from './rate.js';
import { VisitorsRepo } from './visitors.js';
import { VisitsRepo } from './visits.js';
import { WebhooksRepo } from './webhooks.js';

export interface StoreOptions {
  uri: string;
  dbName: string;
  /**
   * Time limit of every database round trip (and of waiting for a connection
   * or a server): a frozen database fails requests after this long instead
   * of holding them.
   */
  operationTimeoutMs?: number;
  /** How long API keys, projects and accounts are cached in this process (0: not cached). */
  cacheTtlMs?: number;
  /** The clock of cache expiry (the app's injected clock). */
  now?: () => number;
  /** Called with each command sent to the database (for counting round trips). */
  /** Each command as sent (`body`: the command document, for the benchmarks' accounting of what is written). */
  onCommand?: (command: { name: string; collection: string; body: Readonly<Record<string, unknown>> }) => void;
  /** Called with each command's answer (or failure) and how long it took (metrics). */
  onCommandDone?: (command: { name: string; seconds: number; ok: boolean }) => void;
}

const SERVER_SELECTION_TIMEOUT_MS = 250;
const START_TIMEOUT_MS = 10_000;

export class Store {
  readonly apiKeys: ApiKeysRepo;
  readonly accounts: AccountsRepo;
  readonly sessions: SessionsRepo;
  readonly projects: ProjectsRepo;
  readonly usage: UsageRepo;
  readonly rate: RateRepo;
  readonly attempts: AttemptsRepo;
  readonly invitations: InvitationsRepo;
  readonly identity: IdentityRepo;
  readonly visitors: VisitorsRepo;
  readonly events: EventsRepo;
  readonly eventIndex: EventIndexRepo;
  readonly visits: VisitsRepo;
  readonly grants: GrantsRepo;
  readonly deletions: DeletionsRepo;
  readonly webhooks: WebhooksRepo;
  readonly proxyStats: ProxyStatsRepo;
  readonly members: MembersRepo;
  readonly memberInvitations: MemberInvitationsRepo;
  readonly audit: AuditRepo;
  readonly lists: ListsRepo;
  readonly rulesets: RulesetsRepo;
  readonly claims: ClaimsRepo;

  readonly db: Db;
  private readonly reachability: Reachability;

  private constructor(
    private readonly client: MongoClient,
    rawDb: Db,
    cache: CacheOptions,
  ) {
    this.reachability = new Reachability(client);
    const db = failFast(rawDb, this.reachability);
    this.db = db;
    this.apiKeys = new ApiKeysRepo(db, cache);
    this.accounts = new AccountsRepo(db, cache);
    this.sessions = new SessionsRepo(db);
    this.projects = new ProjectsRepo(db, cache);
    this.usage = new UsageRepo(db);
    this.rate = new RateRepo(db);
    this.attempts = new AttemptsRepo(db);
    this.invitations = new InvitationsRepo(db);
    this.identity = new IdentityRepo(db);
    this.eventIndex = new EventIndexRepo(db);
    this.events = new EventsRepo(db, this.eventIndex);
    this.visits = new VisitsRepo(db);
    this.visitors = new VisitorsRepo(db, this.visits);
    this.grants = new GrantsRepo(db);
    this.deletions = new DeletionsRepo(db);
    this.webhooks = new WebhooksRepo(db);
    this.proxyStats = new ProxyStatsRepo(db);
    this.members = new MembersRepo(db);
    this.memberInvitations = new MemberInvitationsRepo(db);
    this.audit = new AuditRepo(db);
    this.lists = new ListsRepo(db);
    this.rulesets = new RulesetsRepo(db);
    this.claims = new ClaimsRepo(db);
  }

  /**
   * Connects and creates indexes. Start-up waits up to START_TIMEOUT_MS for
   * the server (a replica set may take a moment to elect a primary).
   */
  static async open({
    uri,
    dbName,
    operationTimeoutMs = DEFAULT_DB_TIMEOUT_MS,
    cacheTtlMs = DEFAULT_CACHE_TTL_MS,
    now = Date.now,
    onCommand,
    onCommandDone,
  }: StoreOptions): Promise<Store> {
    const client = new MongoClient(uri, {
      // An operation that finds no usable server (it is gone, or a replica
      // set is electing) gives up quickly: the client gets a 503 and retries.
      serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
      connectTimeoutMS: operationTimeoutMs,
      socketTimeoutMS: operationTimeoutMs,
      waitQueueTimeoutMS: operationTimeoutMs,
      // Heartbeats find a dead or frozen server within about a second (plus
      // connectTimeoutMS when it is frozen), also while no request runs.
      heartbeatFrequencyMS: 1_000,
      // FerretDB v1 mishandles w:0 and retryable writes need a replica set anyway;
      // we never rely on either.
      retryWrites: false,
      appName: 'deviceid',
      monitorCommands: onCommand !== undefined || onCommandDone !== undefined,
    });
    if (onCommand) client.on('commandStarted', (e) => onCommand({ name: e.commandName, collection: String(e.command[e.commandName] ?? ''), body: e.command }));
    if (onCommandDone) {
      // The driver's `duration` is in milliseconds.
      client.on('commandSucceeded', (e) => onCommandDone({ name: e.commandName, seconds: e.duration / 1000, ok: true }));
      client.on('commandFailed', (e) => onCommandDone({ name: e.commandName, seconds: e.duration / 1000, ok: false }));
    }
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      try {
        await client.connect();
        break;
      } catch (err) {
        if (!(err instanceof MongoServerSelectionError) || Date.now() >= deadline) throw err;
      }
    }
    const store = new Store(client, client.db(dbName), { ttlMs: cacheTtlMs, now });
    await store.ensureIndexes();
    return store;
  }

  private async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.apiKeys.ensureIndexes(),
      this.projects.ensureIndexes(),
      this.sessions.ensureIndexes(),
      this.webhooks.ensureIndexes(),
      this.members.ensureIndexes(),
      this.memberInvitations.ensureIndexes(),
      this.lists.ensureIndexes(),
      this.claims.ensureIndexes(),
      this.audit.ensureIndexes(),
    ]);
  }

  /** False while the database is known to be unreachable: callers answer 503 at once. */
  available(): boolean {
    return this.reachability.available;
  }

  /** Readiness: false at once while the database is known to be unreachable, else whether it answers a ping within `timeoutMs`. */
  async ping(timeoutMs = 1_000): Promise<boolean> {
    if (!this.reachability.available) return false;
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

/**
 * The database as repositories see it: while the server is known to be
 * unreachable, every collection operation throws DatabaseUnavailableError at
 * once instead of waiting for server selection (calls queued behind a keyed
 * lock would otherwise each wait out the selection timeout in turn), and
 * every failed operation tells `reachability` what it learnt.
 */
function failFast(db: Db, reachability: Reachability): Db {
  const guard = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const value = Reflect.get(t, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!reachability.available) throw new DatabaseUnavailableError();
          const result = (value as (...a: unknown[]) => unknown).apply(t, args);
          if (prop === 'collection') return guard(result as object);
          if (result instanceof Promise) {
            return result.catch((err: unknown) => {
              reachability.operationFailed(err);
              throw err;
            });
          }
          return result;
        };
      },
    });
  return guard(db);
}
