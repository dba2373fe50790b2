// The audit log (GET /api/accounts/:accountId/audit). A service makes each
// change through `change`, which writes the change and its entry so that a
// crash between them loses neither, and a refused or failed change leaves
// no entry: the entry is written pending just before the change's write,
// that one write stamps the document it changes, and the entry is confirmed
// after it; one a crash left pending is settled by the sweep from what the
// document says (server/store/audit.ts). Two commands more than writing the
// entry afterwards: its confirmation and the stamp's removal. The same on
// MongoDB, transactions or not: one way, tested here on FerretDB, which has
// none. Entries carry what changed, never a secret: callers pass plain
// fields, and fields named like secrets are dropped as a second guard.
import { encodeTime, monotonicFactory } from 'ulid';
import type { AuditAction } from '../../contract/members.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { AuditDoc, Stamp } from '../store/audit.js';
import type { Store } from '../store/index.js';
import { currentActor, type RequestActor } from './context.js';

export interface Change {
  target?: { type: string; id: string } | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

const SECRET_FIELD = /secret|password|token|^key$|hash/i;

function withoutSecrets(fields: Record<string, unknown> | null | undefined): string | null {
  if (!fields) return null;
  return JSON.stringify(Object.fromEntries(Object.entries(fields).filter(([name]) => !SECRET_FIELD.test(name))));
}

const parsed = (json: string | null) => (json === null ? null : (JSON.parse(json) as Record<string, unknown>));

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const pageKeyError = () => new ApiError('validation_failed', 'paginationKey: not a key this endpoint returned');

/** How long an entry may stay pending before the sweep settles it (a change's writes take seconds at most; the sweep runs every 10 minutes). */
export const PENDING_GRACE_MS = 60_000;

/** Tests: the process stopping at a point of an audited change (nothing after it runs, not even settling the entry). */
export class SimulatedCrash extends Error {
  constructor(at: string) {
    super(`crash after the ${at} (test)`);
    this.name = 'SimulatedCrash';
  }
}

export interface AuditPageQuery {
  member?: string | undefined;
  action?: AuditAction | undefined;
  start?: number | undefined;
  end?: number | undefined;
  limit: number;
  paginationKey?: string | undefined;
}

export class AuditLog {
  private readonly ulid = monotonicFactory();
  /** Tests: where every audited change stops as if its process died there: once its pending entry is written, or once its change is. */
  crashAfter: 'intent' | 'change' | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Who the current request's actor is, for records kept beside the log (a ruleset's author, a label's): a member's email, or the key's label. */
  async actorLabel(): Promise<string> {
    const { actor } = currentActor();
    if (actor.type === 'user' && actor.id && actor.label === null) return (await this.store.accounts.user(actor.id))?.email ?? 'user';
    return actor.label ?? actor.type;
  }

  /**
   * Makes a change of `accountId` with its entry, by the current request's
   * actor (or `by`, e.g. the user who approved a device grant). `write`
   * makes the change: it hands `stamp` to the store method whose write makes
   * it (that method writes the entry just before). The entry is confirmed
   * when that write took effect; dropped when it changed nothing or when the
   * change threw and the document says it was not made (or was undone).
   */
  async change<T>(accountId: string, action: AuditAction, change: Change, write: (stamp: Stamp) => Promise<T>, by?: Partial<RequestActor>): Promise<T> {
    const stamp = this.store.audit.stamp(await this.entry(accountId, action, change, by), () => this.crash('intent'));
    let result: T;
    try {
      result = await write(stamp);
      this.crash('change');
    } catch (err) {
      // Settling reads the database: while it cannot be reached, the entry stays pending for the sweep.
      if (!(err instanceof SimulatedCrash)) await this.store.audit.settle(stamp).catch(() => undefined);
      throw err;
    }
    await this.store.audit.finish(stamp);
    return result;
  }

  /** Records what is not a change of a document (a sign-in, a failed one): nothing to lose beside it. */
  async record(accountId: string, action: AuditAction, change: Change = {}, by?: Partial<RequestActor>): Promise<void> {
    await this.store.audit.insert(await this.entry(accountId, action, change, by));
  }

  private crash(at: 'intent' | 'change'): void {
    if (this.crashAfter === at) throw new SimulatedCrash(at);
  }

  private async entry(accountId: string, action: AuditAction, change: Change, by?: Partial<RequestActor>): Promise<AuditDoc> {
    const who = { ...currentActor(), ...by };
    if (who.actor.type === 'user' && who.actor.id && who.actor.label === null) {
      who.actor = { ...who.actor, label: (await this.store.accounts.user(who.actor.id))?.email ?? null };
    }
    const now = this.clock.now();
    return {
      _id: `${accountId}|${this.ulid(now)}`,
      accountId,
      at: new Date(now),
      action,
      actor: who.actor,
      target: change.target ?? null,
      ip: who.ip,
      userAgent: who.userAgent,
      before: withoutSecrets(change.before),
      after: withoutSecrets(change.after),
    };
  }

  /** A page of the account's entries, newest first; the key of the next page when it was full. */
  async page(accountId: string, q: AuditPageQuery) {
    if (q.paginationKey !== undefined && !ULID.test(q.paginationKey)) throw pageKeyError();
    const lo = q.start === undefined ? '' : encodeTimeBound(q.start);
    let hi = q.end === undefined ? '~' : encodeTimeBound(q.end + 1);
    if (q.paginationKey !== undefined && q.paginationKey < hi) hi = q.paginationKey;
    const docs = await this.store.audit.page({ accountId, lo, hi, member: q.member, action: q.action, limit: q.limit + 1 });
    const entries = docs.slice(0, q.limit);
    const last = entries[entries.length - 1];
    return {
      entries: entries.map(auditView),
      ...(docs.length > q.limit && last ? { paginationKey: last._id.slice(accountId.length + 1) } : {}),
    };
  }
}

/** The smallest ULID of a millisecond (capped at the largest time a ULID holds). */
const encodeTimeBound = (ms: number) => encodeTime(Math.min(ms, 2 ** 48 - 1), 10);

export const auditView = (d: AuditDoc) => ({
  id: d._id.slice(d._id.indexOf('|') + 1),
  at: d.at.toISOString(),
  action: d.action as AuditAction,
  actor: d.actor,
  target: d.target,
  ip: d.ip,
  userAgent: d.userAgent,
  before: parsed(d.before),
  after: parsed(d.after),
});
