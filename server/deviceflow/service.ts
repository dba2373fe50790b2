// The device code flow (spec 3.1, 4.1, 4.2; RFC 8628), as a straight line of
// guard clauses per operation in the manner of node-oidc-provider's device
// grant.
//
// State of a grant, derived on every read from its documents (store/grants.ts):
//   consumed   a `consume:` claim exists (the key was returned once)
//   denied     a `decide:` claim says denied
//   expired    600 s have passed (also for an authorized grant never polled)
//   authorized a `decide:` claim says authorized
//   pending    otherwise
// Both transitions out of pending, and the one out of authorized, happen by a
// unique insert, so each happens exactly once on FerretDB and MongoDB alike.
// The key is created at the moment of consumption: its plaintext is never
// stored, and an authorized grant that expires unpolled leaves no key behind.
import type { Session } from '../accounts/service.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ipLimitKey } from '../edge/address.js';
import {
  DEFAULT_POLL_INTERVAL_SECONDS,
  DEVICE_CODE_TTL_SECONDS,
  DEVICE_CODES_PER_IP_PER_MINUTE,
  SLOW_DOWN_INCREMENT_SECONDS,
  UNKNOWN_CODE_WINDOW_SECONDS,
  UNKNOWN_CODES_PER_IP,
  UNKNOWN_CODES_PER_USER,
} from '../../contract/deviceflow.js';
import { KEY_CREATOR, roleAllows } from '../accounts/access.js';
import type { AuditLog } from '../audit/log.js';
import { ApiError } from '../errors.js';
import type { KeysService } from '../keys/service.js';
import type { ConsumptionDoc, DecisionDoc, GrantDoc } from '../store/grants.js';
import { consumptionId, decisionId } from '../store/grants.js';
import type { Store } from '../store/index.js';
import { KeyedLock } from '../store/keyedLock.js';
import { displayUserCode, generateDeviceCode, generateUserCode, hashDeviceCode, isWellFormedDeviceCode, normalizeUserCode } from './codes.js';

/** Ended grants are kept this long after their window so late polls still get 410, not 400. */
export const GRANT_TOMBSTONE_MS = 3600_000;
const USER_CODE_ATTEMPTS = 10;
const MAX_USER_AGENT = 512;

export type GrantStatus = 'pending' | 'authorized' | 'consumed' | 'denied' | 'expired';

interface GrantState {
  status: GrantStatus;
  decision: DecisionDoc | null;
}

export interface GrantView {
  userCode: string;
  clientName: string;
  keyName: string;
  status: 'pending' | 'authorized' | 'consumed' | 'denied';
  requestedAt: string;
  expiresAt: string;
  requestIp: string;
  requestUserAgent: string | null;
  accountId: string | null;
  projectId: string | null;
}

export type PollResult =
  | { status: 200; body: { status: 'pending'; interval: number } }
  | { status: 200; body: { status: 'authorized'; api_key: string } }
  | { status: 410; body: { status: 'expired' | 'consumed' | 'denied' } };

export const cliKeyName = (clientName: string) => `${clientName} (CLI)`;

/**
 * The periodic sweep for `defaultSweeps` (FerretDB has no TTL indexes):
 * deletes grants, user codes and claims one tombstone period after their
 * window, and passed rate-limit windows.
 */
export const grantSweep = (store: Store) => (now: Date) => store.grants.deleteExpired(new Date(now.getTime() - GRANT_TOMBSTONE_MS), now);

const ended = (status: 'expired' | 'consumed' | 'denied'): PollResult => ({ status: 410, body: { status } });
const unknownDeviceCode = () => new ApiError('invalid_device_code');
const unknownUserCode = () => new ApiError('unknown_user_code');
const expiredUserCode = () => new ApiError('code_expired');
const usedUserCode = () => new ApiError('code_used');
const tooMany = (message: string, retryAfterMs: number) =>
  new ApiError('too_many_attempts', message, {}, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) });

export class DeviceFlowService {
  private readonly lookups = new KeyedLock();

  constructor(
    private readonly store: Store,
    private readonly keys: KeysService,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  // ---- The tool's side: POST /api/cli/device-code, POST /api/cli/token ----

  async start(clientName: string, from: { ip: string; userAgent: string | undefined }) {
    const limited = await this.store.grants.takeLimit(`device-code:ip:${ipLimitKey(from.ip)}`, DEVICE_CODES_PER_IP_PER_MINUTE, 60_000, this.now());
    if (!limited.ok) throw tooMany('Too many device codes requested from this address; try again later', limited.retryAfterMs);

    const now = this.now();
    const expiresAt = new Date(now.getTime() + DEVICE_CODE_TTL_SECONDS * 1000);
    const deviceCode = generateDeviceCode();
    const grantId = hashDeviceCode(deviceCode);
    const userCode = await this.claimUserCode(grantId, expiresAt, now);
    const grant: GrantDoc = {
      _id: grantId,
      userCode,
      clientName,
      requestIp: from.ip,
      requestUserAgent: from.userAgent ? from.userAgent.slice(0, MAX_USER_AGENT) : null,
      createdAt: now,
      expiresAt,
      interval: DEFAULT_POLL_INTERVAL_SECONDS,
      lastPolledAt: null,
    };
    await this.store.grants.insert(grant);
    const shown = displayUserCode(userCode);
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_url: `${this.config.baseUrl}/cli/auth?code=${shown}`,
      expires_in: DEVICE_CODE_TTL_SECONDS,
      interval: grant.interval,
    } as const;
  }

  private async claimUserCode(grantId: string, expiresAt: Date, now: Date): Promise<string> {
    for (let i = 0; i < USER_CODE_ATTEMPTS; i++) {
      const code = generateUserCode();
      if (await this.store.grants.claimUserCode({ _id: code, grantId, expiresAt }, now)) return code;
    }
    throw new Error(`no free user code after ${USER_CODE_ATTEMPTS} attempts`);
  }

  async poll(deviceCode: string): Promise<PollResult> {
    if (!isWellFormedDeviceCode(deviceCode)) throw unknownDeviceCode();
    const grant = await this.store.grants.byId(hashDeviceCode(deviceCode));
    if (!grant) throw unknownDeviceCode();
    const state = await this.state(grant);
    switch (state.status) {
      case 'consumed':
      case 'denied':
      case 'expired':
        return ended(state.status);
      case 'authorized':
        return this.consume(grant, state.decision!);
      case 'pending': {
        const interval = await this.store.grants.recordPoll(grant._id, this.now(), SLOW_DOWN_INCREMENT_SECONDS);
        if (interval === null) throw unknownDeviceCode();
        return { status: 200, body: { status: 'pending', interval } };
      }
    }
  }

  /** authorized → consumed: only the poll whose claim insert wins creates and returns the key. */
  private async consume(grant: GrantDoc, decision: DecisionDoc): Promise<PollResult> {
    const projectId = decision.projectId!;
    // Projects and the approver's role are checked again: access may have changed since the approval.
    if (!(await this.store.projects.ofAccount(decision.accountId, projectId))) return ended('denied');
    const approver = await this.store.members.get(decision.accountId, decision.userId);
    if (!approver || !roleAllows(approver.role, KEY_CREATOR)) return ended('denied');
    const claim: ConsumptionDoc = {
      _id: consumptionId(grant._id),
      grantId: grant._id,
      consumedAt: this.now(),
      keyId: null,
      expiresAt: grant.expiresAt,
    };
    if (!(await this.store.grants.claimConsumption(claim))) return ended('consumed');
    let issued;
    try {
      // Recorded as the approver's: the tool polling has no identity of its own.
      const by = { actor: { type: 'user' as const, id: decision.userId, label: null } };
      issued = await this.keys.issue(decision.accountId, projectId, cliKeyName(grant.clientName), 'live', 'cli', by);
    } catch (err) {
      // No key reached anyone: give the claim back so the tool's retry can succeed.
      await this.store.grants.releaseConsumption(grant._id).catch(() => undefined);
      throw err;
    }
    // Bookkeeping only (which key this grant produced); its failure must not withhold the key.
    await this.store.grants.setConsumedKey(grant._id, issued.apiKey.id).catch(() => undefined);
    return { status: 200, body: { status: 'authorized', api_key: issued.key } };
  }

  // ---- The consent page's side: /api/cli/accounts, /api/cli/grants/:userCode[/authorize|/deny] ----

  /**
   * The accounts where the user may approve a grant (their role may create
   * keys), each with its projects: the session's current account first (the
   * default choice), then the others in the order the user joined them.
   */
  async accounts(session: Session) {
    const memberships = (await this.store.members.ofUser(session.userId))
      .filter((m) => roleAllows(m.role, KEY_CREATOR))
      .sort((a, b) => Number(b.accountId === session.accountId) - Number(a.accountId === session.accountId));
    return Promise.all(
      memberships.map(async (m) => ({
        id: m.accountId,
        role: m.role,
        current: m.accountId === session.accountId,
        projects: (await this.store.projects.listForAccount(m.accountId)).map((p) => ({ id: p._id, name: p.name })),
      })),
    );
  }

  async view(session: Session, rawCode: string, ip: string): Promise<GrantView> {
    const { grant, state } = await this.lookup(session, rawCode, ip);
    if (state.status === 'expired') throw expiredUserCode();
    if (state.status === 'pending') return this.viewOf(grant, 'pending', null);
    if (!(await this.seesDecision(session, state.decision, session.accountId))) throw usedUserCode();
    return this.viewOf(grant, state.status, state.decision);
  }

  /**
   * Approves for a project of `accountId`: the account the request named, in
   * which the auth middleware has just read the user's role (the route's
   * `accountInBody`), never the posted value unchecked.
   */
  async authorize(session: Session, accountId: string, rawCode: string, projectId: string, ip: string): Promise<GrantView> {
    const { grant, state } = await this.lookup(session, rawCode, ip);
    const chosen = { accountId, projectId };
    if (state.status !== 'pending') return this.decided(session, accountId, grant, state, 'authorized', chosen);
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
    const decision = this.decision(session, accountId, grant, 'authorized', projectId);
    const claimed = await this.audit.change(
      accountId,
      'deviceflow.authorize',
      { target: { type: 'project', id: projectId }, after: { clientName: grant.clientName, accountId, projectId } },
      (stamp) => this.store.grants.claimDecision(decision, stamp),
    );
    if (!claimed) return this.decided(session, accountId, grant, await this.state(grant), 'authorized', chosen);
    return this.viewOf(grant, 'authorized', decision);
  }

  async deny(session: Session, rawCode: string, ip: string): Promise<GrantView> {
    const { grant, state } = await this.lookup(session, rawCode, ip);
    if (state.status !== 'pending') return this.decided(session, session.accountId, grant, state, 'denied', null);
    const claimed = await this.audit.change(session.accountId, 'deviceflow.deny', { after: { clientName: grant.clientName } }, (stamp) =>
      this.store.grants.claimDecision(this.decision(session, session.accountId, grant, 'denied', null), stamp),
    );
    if (!claimed) return this.decided(session, session.accountId, grant, await this.state(grant), 'denied', null);
    return this.viewOf(grant, 'denied', null);
  }

  /**
   * A decision arrived for a grant that is no longer pending: repeat answers
   * 200, anything else is refused. `accountId` is the account this request
   * acts in, whose membership the auth middleware checked.
   */
  private async decided(
    session: Session,
    accountId: string,
    grant: GrantDoc,
    state: GrantState,
    wanted: DecisionDoc['decision'],
    chosen: { accountId: string; projectId: string } | null,
  ): Promise<GrantView> {
    if (state.status === 'expired') throw expiredUserCode();
    const d = state.decision;
    if (!d || !(await this.seesDecision(session, d, accountId))) throw usedUserCode();
    if (d.decision === 'denied' && wanted === 'denied') return this.viewOf(grant, 'denied', null);
    if (d.decision === 'authorized' && wanted === 'authorized' && d.accountId === chosen?.accountId && d.projectId === chosen.projectId) {
      return this.viewOf(grant, state.status === 'consumed' ? 'consumed' : 'authorized', d);
    }
    if (d.decision === 'denied') throw new ApiError('already_decided', 'You already denied this request');
    throw new ApiError('already_decided', wanted === 'denied' ? 'You already approved this request' : 'You already approved this request for another project');
  }

  /**
   * A decided grant is shown only to members of the account it was decided
   * in (anyone else learns only that the code was used). `checked` is an
   * account whose membership this request already read.
   */
  private async seesDecision(session: Session, decision: DecisionDoc | null, checked: string): Promise<boolean> {
    if (!decision) return false;
    return decision.accountId === checked || (await this.store.members.get(decision.accountId, session.userId)) !== null;
  }

  private decision(session: Session, accountId: string, grant: GrantDoc, decision: DecisionDoc['decision'], projectId: string | null): DecisionDoc {
    return {
      _id: decisionId(grant._id),
      grantId: grant._id,
      decision,
      accountId,
      userId: session.userId,
      projectId,
      decidedAt: this.now(),
      expiresAt: grant.expiresAt,
    };
  }

  /**
   * Resolves a user code for a signed-in user, bounded against brute force
   * (RFC 8628 §5.1): a lookup takes one unit from the user's and the IP's
   * budgets and gives it back when the code exists, so only unknown codes
   * count. Over either budget every lookup is refused (429), valid or not,
   * so the limit reveals nothing about which codes exist. Lookups of one user
   * and of one IP run one at a time in this process, so concurrent lookups
   * of a valid code never see each other's not-yet-returned units.
   */
  private lookup(session: Session, rawCode: string, ip: string): Promise<{ grant: GrantDoc; state: GrantState }> {
    return this.lookups.run(`user:${session.userId}`, () => this.lookups.run(`ip:${ipLimitKey(ip)}`, () => this.budgetedLookup(session, rawCode, ip)));
  }

  private async budgetedLookup(session: Session, rawCode: string, ip: string): Promise<{ grant: GrantDoc; state: GrantState }> {
    const refund = await this.takeLookupBudget(session, ip);
    const code = normalizeUserCode(rawCode);
    const index = code ? await this.store.grants.userCode(code) : null;
    const grant = index ? await this.store.grants.byId(index.grantId) : null;
    if (!grant) throw unknownUserCode();
    await refund();
    return { grant, state: await this.state(grant) };
  }

  private async takeLookupBudget(session: Session, ip: string): Promise<() => Promise<void>> {
    const windowMs = UNKNOWN_CODE_WINDOW_SECONDS * 1000;
    const message = 'Too many unknown codes tried; try again later';
    const userKey = `user-code:user:${session.userId}`;
    const ipKey = `user-code:ip:${ipLimitKey(ip)}`;
    const byUser = await this.store.grants.takeLimit(userKey, UNKNOWN_CODES_PER_USER, windowMs, this.now());
    if (!byUser.ok) throw tooMany(message, byUser.retryAfterMs);
    const byIp = await this.store.grants.takeLimit(ipKey, UNKNOWN_CODES_PER_IP, windowMs, this.now());
    if (!byIp.ok) {
      await this.store.grants.refundLimit(userKey, byUser.windowStart);
      throw tooMany(message, byIp.retryAfterMs);
    }
    return async () => {
      await Promise.all([this.store.grants.refundLimit(userKey, byUser.windowStart), this.store.grants.refundLimit(ipKey, byIp.windowStart)]);
    };
  }

  // ---- State ----

  private async state(grant: GrantDoc): Promise<GrantState> {
    const [decision, consumption] = await Promise.all([this.store.grants.decision(grant._id), this.store.grants.consumption(grant._id)]);
    if (consumption) return { status: 'consumed', decision };
    if (decision?.decision === 'denied') return { status: 'denied', decision };
    if (this.now().getTime() >= grant.expiresAt.getTime()) return { status: 'expired', decision };
    if (decision) return { status: 'authorized', decision };
    return { status: 'pending', decision: null };
  }

  private viewOf(grant: GrantDoc, status: GrantView['status'], decision: Pick<DecisionDoc, 'accountId' | 'projectId'> | null): GrantView {
    // A denial names no project, so it shows no account either.
    const approved = decision?.projectId ? decision : null;
    return {
      userCode: displayUserCode(grant.userCode),
      clientName: grant.clientName,
      keyName: cliKeyName(grant.clientName),
      status,
      requestedAt: grant.createdAt.toISOString(),
      expiresAt: grant.expiresAt.toISOString(),
      requestIp: grant.requestIp,
      requestUserAgent: grant.requestUserAgent,
      accountId: approved?.accountId ?? null,
      projectId: approved?.projectId ?? null,
    };
  }

  /** See `grantSweep`. */
  sweep(now: Date): Promise<number> {
    return grantSweep(this.store)(now);
  }

  private now(): Date {
    return new Date(this.clock.now());
  }
}
