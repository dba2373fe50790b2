// POST /v1/identify end to end: allowlist → metering → matching → risk →
// event and visit stored → compact result. Reading events and visit
// histories is server/events/ and server/visitors/.
import { createHash } from 'node:crypto';
import { ulid } from '../ids.js';
import type { z } from 'zod';
import type { IdentifyRequestSchema, IdentifyResultSchema } from '../../contract/identify.js';
import type { SignalName } from '../../contract/signals.js';
import type { Clock } from '../clock.js';
import { DEFAULT_VISITOR_CACHE_SIZE } from '../config.js';
import type { Meter } from '../metering/meter.js';
import { serviceUnavailable } from '../errors.js';
import { checkAllowlist } from '../projects/allowlist.js';
import type { EdgeFacts } from '../risk/edgeFacts.js';
import { assessRisk, VELOCITY_WINDOWS } from '../risk/engine.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { EventDoc, StoredDecision } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { ProjectDoc } from '../store/projects.js';
import { KeyedLock } from '../store/keyedLock.js';
import type { RecentActivity } from '../store/visitors.js';
import type { StoredVisit } from '../store/visits.js';
import { coverage, extractComponents, type Signals } from './components.js';
import { confidenceOf } from './confidence.js';
import type { IdentifyHooks, IdentifyResponse } from './hooks.js';
import { link, lookupQuery, remembered, type Match, type Visit } from './linker.js';
import { afterVisit, countVisit, toRecord } from './record.js';
import { relatedIndexKey } from './related.js';
import { CacheUnproven, CAS_ATTEMPTS, StoreIndex, TokenClaimLost } from './storeIndex.js';
import { VisitorCache } from './visitorCache.js';
import type { LinkedIdKeys } from '../keys/linkedIds.js';
import { makeVisitId } from '../visitors/visitId.js';

/** Runs of one identify: from the cache, then from the database while a token claim is lost to another visit. */
export const IDENTIFY_ATTEMPTS = 3;

type IdentifyRequest = z.infer<typeof IdentifyRequestSchema>;
type IdentifyResult = z.infer<typeof IdentifyResultSchema>;
/** The compact result, and what the project's rules decided (for the site's server only). */
interface Judged {
  result: IdentifyResult;
  decision: StoredDecision | undefined;
}

/** What recording a visit needs besides the match. */
interface VisitContext {
  signals: Signals;
  edge: EdgeFacts;
  activity: RecentActivity;
  requestId: string;
  confidence: number;
}

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

/** Where an identify call comes from, as far as identification cares. */
export interface IdentifyFrom {
  /** The browser's Origin header (a first-party proxy passes it through). */
  origin?: string;
  /** A request a first-party proxy forwarded with a valid secret (server/proxy/). */
  proxy?: {
    /** The site's host the proxy serves (checked against the allowlist like the Origin). */
    host: string;
    /** The token of the device cookie: the one the browser presented (valid for the project), or one issued now. */
    deviceToken: string;
    presented: boolean;
    /** The signed-in user's id the site's own session vouches for (the proxy's deviceid-proxy-linked-id). */
    linkedId?: string;
  };
}

/**
 * Which of the visit's tokens linking goes by: a known one first (the
 * agent's if its owner is known, else the device cookie's), else the agent's,
 * else the cookie's. When both are known and name different visitors, the
 * cookie wins: the server-set HttpOnly cookie is the harder one to copy, and
 * outlives script storage (the agent's token then moves to its visitor).
 */
export function chooseToken(script: string | null, cookie: string | null, owners: ReadonlyMap<string, string | null>): string | null {
  if (!script || !cookie) return script ?? cookie;
  const [s, c] = [owners.get(script) ?? null, owners.get(cookie) ?? null];
  if (s && c && s !== c) return cookie;
  if (s) return script;
  return c ? cookie : script;
}

/**
 * The visit's tokens as linking takes them: the one it goes by (chooseToken,
 * the cookie only when the browser presented it), the same browser's other
 * one (the cookie issued now included), and the device cookie's.
 */
export function visitTokens(
  script: string | null,
  cookie: string | null,
  cookiePresented: boolean,
  owners: ReadonlyMap<string, string | null>,
): Pick<Visit, 'tokenHash' | 'otherToken' | 'cookie' | 'cookiePresented'> {
  const tokenHash = chooseToken(script, cookiePresented ? cookie : null, owners);
  return {
    tokenHash,
    otherToken: [script, cookie].find((t) => t !== null && t !== tokenHash) ?? null,
    cookie,
    cookiePresented: cookie !== null && cookiePresented,
  };
}

export class IdentificationService {
  private readonly visitTurns = new KeyedLock();
  /** Recent visitors and their tokens, so that a returning device costs the visit's write and the event's insert. */
  readonly cache: VisitorCache;

  constructor(
    private readonly store: Store,
    private readonly meter: Meter,
    private readonly clock: Clock,
    private readonly linkedIds: LinkedIdKeys,
    private readonly hooks: IdentifyHooks = {},
    cacheSize = DEFAULT_VISITOR_CACHE_SIZE,
  ) {
    this.cache = new VisitorCache(cacheSize);
  }

  async identify(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, from: IdentifyFrom = {}): Promise<IdentifyResponse> {
    const project = await this.store.projects.byId(key.projectId);
    checkAllowlist(project?.allowedDomains ?? [], key.type, body.url, from.origin, from.proxy?.host);
    const reservation = await this.meter.admit(key);
    let judged: Judged;
    try {
      judged = await this.runProven(key, body, edge, project, from.proxy);
    } catch (err) {
      await reservation.release();
      throw err;
    }
    // The decision goes to the site's server only (a sealed result), never into an answer a page reads.
    return this.hooks.respond ? this.hooks.respond(project, judged.result, judged.decision) : judged.result;
  }

  /**
   * Identify from the cache; when what it served is not proven, or a new
   * visitor's token was claimed meanwhile, again from the database alone.
   * A lost claim means another first visit of the device won, which the
   * next attempt finds; one lost IDENTIFY_ATTEMPTS times in a row (visits
   * of one device racing on and on) answers 503 with Retry-After.
   */
  private async runProven(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, project: ProjectDoc | null, proxy: IdentifyFrom['proxy']): Promise<Judged> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.run(key, body, edge, project, proxy, attempt === 1);
      } catch (err) {
        if (!(err instanceof CacheUnproven || err instanceof TokenClaimLost)) throw err;
        if (attempt === IDENTIFY_ATTEMPTS) throw serviceUnavailable(1);
      }
    }
  }

  private async run(
    key: ApiKeyDoc,
    body: IdentifyRequest,
    edge: EdgeFacts,
    project: ProjectDoc | null,
    proxy: IdentifyFrom['proxy'],
    fromCache: boolean,
  ): Promise<Judged> {
    const now = this.clock.now();
    const accountId = key.accountId;
    const signals = unwrap(body.signals);
    const components = extractComponents(signals);
    const token = signals.deviceToken?.token;
    const scriptToken = token ? sha(token) : null;
    // The device cookie's tokens live beside the agent's in the identity index, under their own hash.
    const cookieToken = proxy ? sha(`cookie:${proxy.deviceToken}`) : null;
    const presentedCookie = proxy?.presented ? cookieToken : null;

    // The related-visitors list of this visit's device key and network, joined by a visitor first seen on it.
    const related = relatedIndexKey(key.projectId, components, edge.network);
    const index = new StoreIndex(this.store, accountId, now, this.cache, fromCache, related);
    // Both tokens' owners in one read, with the lookup a visit no token names needs; linking's tokenOwner then reads nothing.
    const presented = [scriptToken, presentedCookie].filter((t): t is string => t !== null);
    // Only a linkedId the site's server vouches for is evidence (its proxy's header, or a proof signed with the project's
    // linkedId key); the one in the body alone is anyone's to write (a tag).
    const vouched = proxy?.linkedId ?? (this.linkedIds.vouched(project, body.linkedId, body.linkedIdProof, now) ? body.linkedId : undefined);
    const linkedId = this.linkedIds.evidence(vouched, project);
    const ahead = () => lookupQuery({ components, network: edge.network, now, linkedId });
    const owners = presented.length ? await index.tokenOwners(presented, ahead) : new Map<string, string | null>();
    const tokens = visitTokens(scriptToken, cookieToken, presentedCookie !== null, owners);
    const { tokenHash } = tokens;
    const visit: Visit = {
      components,
      ...tokens,
      linkedId,
      network: edge.network,
      incognito: signals.incognito?.likely ?? false,
      now,
    };
    const match = await link(index, visit);
    // The visit's other token (the cookie issued now included) names the matched visitor too, in
    // remember's bulk write; one that names a visitor whose fingerprint disagreed stays where it is.
    const moreTokens = tokensToPoint([scriptToken, cookieToken], tokenHash, owners, match);
    const activity = { t: now, ip: edge.ip, country: edge.location.country };
    const confidence = confidenceOf({ kind: match.kind, p: match.p, coverage: coverage(components) });
    const requestId = `req_${ulid(now)}`;
    const { before, counted, risk, visitId } = await this.recordVisit(index, match, visit, { signals, edge, activity, requestId, confidence });
    // The visitor's high-recall group after this visit: the one it joined (now or before), or its own.
    const highRecallVisitorId = before.highRecall ?? match.highRecall ?? match.visitorId;
    const signalsJson = JSON.stringify({ client: signals, server: risk.server });
    const ipLocation = {
      country: edge.location.country,
      city: edge.location.city,
      region: edge.location.region,
      latitude: edge.location.latitude,
      longitude: edge.location.longitude,
    };

    const event: EventDoc = {
      _id: requestId,
      accountId,
      projectId: key.projectId,
      visitorId: match.visitorId,
      ...(highRecallVisitorId !== match.visitorId && { highRecallVisitorId }),
      visitId,
      visitSeq: counted.seq,
      keyType: key.type === 'test' ? 'test' : 'live',
      confidence,
      botProbability: risk.botProbability,
      suspectScore: risk.suspectScore,
      riskFactors: risk.riskFactors,
      verdicts: { ...risk.verdicts, velocity: risk.velocity },
      ip: edge.ip,
      ipLocation,
      url: body.url ?? '',
      referrer: body.referrer ?? '',
      tagJson: body.tag === undefined ? null : JSON.stringify(body.tag),
      linkedId: proxy?.linkedId ?? body.linkedId ?? null,
      suspect: false,
      signalsJson,
      clientTimestamp: body.timestamp,
      timestamp: now,
      createdAt: new Date(now),
      visitCount: counted.visitCount,
      firstSeenAt: counted.firstSeenAt,
      // Absent reads as false (storedView.ts): one field fewer to write on most identifies.
      ...(vouched !== undefined && { linkedIdVouched: true }),
    };
    // The project's rules judge the event as it will be stored; a decision is stored only when a ruleset made it (absent reads as NO_DECISION).
    const decision = await this.hooks.decide?.(project, event, { client: signals, server: risk.server });
    if (decision && decision.rulesetVersion > 0) event.decision = decision;
    const learnt = remembered(before, match, visit, match.kind === 'new');
    const indexed = index.remember({ ...learnt, moreTokens, related: learnt.newPrefix ? related : null });
    // A new visitor's token claim decides whether the visitor stands: its event waits for it.
    if (index.claiming) await indexed;
    await Promise.all([indexed, this.store.events.insert(event, this.hooks.withEvent?.(project, event))]);
    // A token taken from another visitor changes that visitor, so that no process's cache vouches for it any more.
    const left = [...new Set(moreTokens.map((t) => owners.get(t) ?? null))].filter((v): v is string => v !== null && v !== match.visitorId);
    await Promise.all(left.map((v) => this.store.visitors.touch(v)));
    for (const v of left) this.cache.forget(v);
    // Every token that now names the visitor: the one linking went by, those pointed at it, and those that named it already.
    const naming = presented.filter((t) => owners.get(t) === match.visitorId);
    index.rememberTokens(match.visitorId, [...new Set([...(tokenHash && !match.tokenRejected ? [tokenHash] : []), ...moreTokens, ...naming])]);
    this.hooks.stored?.(project, event);

    const result: IdentifyResult = {
      requestId,
      visitorId: match.visitorId,
      highRecallVisitorId,
      confidence,
      botProbability: risk.botProbability,
      suspectScore: risk.suspectScore,
      visitCount: counted.visitCount,
      firstSeenAt: counted.firstSeenAt,
      lastSeenAt: counted.previousSeenAt,
      riskFactors: risk.riskFactors,
      verdicts: risk.verdicts,
      ip: edge.ip,
      ipLocation,
      timestamp: now,
    };
    return { result, decision };
  }

  /**
   * Records the visit on the matched visitor: counts it on the document
   * linking read, judges risk on the visitor's activity with this visit
   * (before anything is written), and writes the next document by
   * compare-and-swap. A lost race reads the visitor again and decides afresh:
   * sequence number, velocity, risk and summary all come from one read.
   * Visits of one visitor take turns within the process, so that only
   * another process can make one retry.
   */
  private recordVisit(index: StoreIndex, match: Match, visit: Visit, of: VisitContext) {
    return this.visitTurns.run(match.visitorId, () => this.recordVisitInTurn(index, match, visit, of));
  }

  private async recordVisitInTurn(index: StoreIndex, match: Match, visit: Visit, of: VisitContext) {
    const { signals, edge, activity, requestId, confidence } = of;
    let before = await index.docToRecordOn(match.visitorId);
    for (let attempt = 1; before; attempt++) {
      const counted = countVisit(before, activity, VELOCITY_WINDOWS['24h']);
      const risk = assessRisk(signals, edge, counted.recent, visit.now, match.uncorroborated === true);
      const visitId = makeVisitId(visit.now, counted.seq);
      const summary: StoredVisit = {
        seq: counted.seq,
        requestId,
        id: visitId,
        timestamp: visit.now,
        country: edge.location.country,
        city: edge.location.city,
        region: edge.location.region,
        asn: edge.asn.asn,
        asnOrg: edge.asn.org,
        asnCategory: edge.asn.category,
        botProbability: risk.botProbability,
        confidence,
        riskFactors: risk.riskFactors,
      };
      if (await index.write(before, afterVisit(before, match, visit, counted, summary))) {
        // A visit recorded on a visitor merged away meanwhile is counted on the survivor too.
        if (before.mergedInto) await this.store.visitors.countMergedVisit(before.mergedInto);
        return { before: toRecord(before), counted, risk, visitId };
      }
      if (attempt === CAS_ATTEMPTS) throw new Error(`visitor ${match.visitorId} kept changing while a visit was recorded`);
      before = await this.store.visitors.get(match.visitorId);
    }
    throw new Error(`visitor ${match.visitorId} disappeared`);
  }
}

/**
 * After the match, the visit's tokens besides the one linking went by (the
 * device cookie issued on this visit included) that must now name the
 * matched visitor: every one that names another visitor or none, except a
 * known token when linking did not believe the visit's token (the visitor
 * it names had a fingerprint that disagreed; a token of that visitor stays
 * where it is). Pure, for the accuracy benchmark's index too.
 */
export function tokensToPoint(
  tokens: ReadonlyArray<string | null>,
  chosen: string | null,
  owners: ReadonlyMap<string, string | null>,
  match: Pick<Match, 'visitorId' | 'tokenRejected'>,
): string[] {
  return tokens.filter((t): t is string => {
    if (t === null || t === chosen) return false;
    const owner = owners.get(t) ?? null;
    return owner !== match.visitorId && !(match.tokenRejected && owner !== null);
  });
}

/** Request signals carry `{value, duration}`; stored and returned signals hold the value alone. */
function unwrap(signals: IdentifyRequest['signals']): Signals {
  const out: Record<string, unknown> = {};
  for (const [name, result] of Object.entries(signals) as [SignalName, { value: unknown } | undefined][]) {
    if (result) out[name] = result.value;
  }
  return out;
}
