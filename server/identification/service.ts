// POST /v1/identify end to end: allowlist → metering → matching → risk →
// event and visit stored → compact result. Also the full-event and
// visit-history reads.
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import type { z } from 'zod';
import type { FullEventSchema } from '../../contract/events.js';
import type { IdentifyRequestSchema, IdentifyResultSchema } from '../../contract/identify.js';
import type { SignalName } from '../../contract/signals.js';
import { VISITS_PAGE_SIZE, type VisitHistorySchema } from '../../contract/visits.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import { checkAllowlist } from '../projects/allowlist.js';
import type { EdgeFacts } from '../risk/edgeFacts.js';
import { assessRisk, VELOCITY_WINDOWS } from '../risk/engine.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { VisitorDoc } from '../store/visitors.js';
import { pageOf, type StoredVisit } from '../store/visits.js';
import { coverage, extractComponents, type Components, type Signals } from './components.js';
import { confidenceOf } from './confidence.js';
import { link, remember, type LinkIndex, type VisitorHistory } from './linker.js';
import { makeVisitId, seqOfVisitId } from './visitId.js';

type IdentifyRequest = z.infer<typeof IdentifyRequestSchema>;
type IdentifyResult = z.infer<typeof IdentifyResultSchema>;
type FullEvent = z.infer<typeof FullEventSchema>;
type VisitHistory = z.infer<typeof VisitHistorySchema>;

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

export class IdentificationService {
  constructor(
    private readonly store: Store,
    private readonly meter: Meter,
    private readonly clock: Clock,
  ) {}

  async identify(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, origin: string | undefined): Promise<IdentifyResult> {
    const project = await this.store.projects.byId(key.projectId);
    checkAllowlist(project?.allowedDomains ?? [], key.type, body.url, origin);
    const reservation = await this.meter.admit(key);
    try {
      return await this.run(key, body, edge);
    } catch (err) {
      await reservation.release();
      throw err;
    }
  }

  private async run(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts): Promise<IdentifyResult> {
    const now = this.clock.now();
    const accountId = key.accountId;
    const signals = unwrap(body.signals);
    const components = extractComponents(signals);
    const cov = coverage(components);
    const tokenHash = signals.deviceToken?.token ? sha(signals.deviceToken.token) : null;

    const index = this.index(accountId, now);
    const match = await link(index, components, tokenHash, edge.network);
    const rec = await this.store.visitors.recordVisit(
      match.visitorId,
      now,
      components as Record<string, string>,
      { t: now, ip: edge.ip, country: edge.location.country },
      VELOCITY_WINDOWS['24h'],
      { network: edge.network, tokenHash: match.tokenRejected ? null : tokenHash },
    );
    await remember(index, match, components, tokenHash);

    const risk = assessRisk(signals, edge, rec.recent, now);
    const confidence = confidenceOf({ kind: match.kind, coverage: cov, score: match.score, margin: match.margin, distorted: risk.distorted, joinedByFingerprint: match.joinedByFingerprint });
    const requestId = `req_${ulid(now)}`;
    const visitId = makeVisitId(now, rec.visitCount);
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
      visitId,
      visitSeq: rec.visitCount,
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
      linkedId: body.linkedId ?? null,
      suspect: false,
      signalsJson,
      clientTimestamp: body.timestamp,
      timestamp: now,
      createdAt: new Date(now),
    };
    await this.store.events.insert(event);
    await this.store.visits.append(match.visitorId, {
      seq: rec.visitCount,
      requestId,
      id: visitId,
      timestamp: now,
      country: edge.location.country,
      city: edge.location.city,
      region: edge.location.region,
      asn: edge.asn.asn,
      asnOrg: edge.asn.org,
      asnCategory: edge.asn.category,
      botProbability: risk.botProbability,
      confidence,
      riskFactors: risk.riskFactors,
    });

    return {
      requestId,
      visitorId: match.visitorId,
      confidence,
      botProbability: risk.botProbability,
      suspectScore: risk.suspectScore,
      visitCount: rec.visitCount,
      firstSeenAt: rec.firstSeenAt,
      lastSeenAt: rec.previousSeenAt,
      riskFactors: risk.riskFactors,
      verdicts: risk.verdicts,
      ip: edge.ip,
      ipLocation,
      timestamp: now,
    };
  }

  /** The matching index of one account, backed by the store. */
  private index(accountId: string, now: number): LinkIndex {
    const { fingerprints, visitors } = this.store;
    return {
      tokenOwner: (t) => fingerprints.token(accountId, t),
      exactOwner: (k) => fingerprints.exact(accountId, k),
      candidates: (keys) => fingerprints.candidates(accountId, keys),
      history: async (id) => {
        const v = await this.ownVisitor(accountId, id);
        return v ? history(v) : null;
      },
      createVisitor: async (components) => {
        const id = `iq_${ulid(now)}`;
        await visitors.create({
          _id: id,
          accountId,
          firstSeenAt: now,
          lastSeenAt: now,
          visitCount: 0,
          components: components as Record<string, string>,
          previousComponents: null,
          recent: [],
          networks: [],
          tokens: [],
        });
        return id;
      },
      dropVisitor: (id) => visitors.delete(id),
      claimExact: (k, id) => fingerprints.claimExact(accountId, k, id),
      claimToken: (t, id) => fingerprints.claimToken(accountId, t, id),
      setToken: (t, id) => fingerprints.setToken(accountId, t, id),
      moveToken: (t, from, to) => fingerprints.moveToken(accountId, t, from, to),
      addPartials: (keys, id) => fingerprints.addPartials(accountId, keys, id),
    };
  }

  private async ownVisitor(accountId: string, visitorId: string): Promise<VisitorDoc | null> {
    const v = await this.store.visitors.get(visitorId);
    return v && v.accountId === accountId ? v : null;
  }

  async getEvent(accountId: string, requestId: string): Promise<FullEvent> {
    const e = await this.store.events.get(requestId);
    if (!e || e.accountId !== accountId) throw new ApiError(404, 'Event not found');
    return fullEvent(e);
  }

  async updateEvent(accountId: string, requestId: string, patch: { suspect?: boolean; linkedId?: string | null; tag?: Record<string, unknown> | null }): Promise<FullEvent> {
    const e = await this.store.events.get(requestId);
    if (!e || e.accountId !== accountId) throw new ApiError(404, 'Event not found');
    const set: Partial<Pick<EventDoc, 'suspect' | 'linkedId' | 'tagJson'>> = {};
    if (patch.suspect !== undefined) set.suspect = patch.suspect;
    if (patch.linkedId !== undefined) set.linkedId = patch.linkedId;
    if (patch.tag !== undefined) set.tagJson = patch.tag === null ? null : JSON.stringify(patch.tag);
    const updated = await this.store.events.update(requestId, set);
    if (!updated) throw new ApiError(404, 'Event not found');
    return fullEvent(updated);
  }

  async searchByLinkedId(accountId: string, linkedId: string, limit: number): Promise<FullEvent[]> {
    return (await this.store.events.byLinkedId(accountId, linkedId, limit)).map(fullEvent);
  }

  async visitHistory(accountId: string, visitorId: string, before: string | undefined): Promise<VisitHistory> {
    const visitor = await this.ownVisitor(accountId, visitorId);
    if (!visitor || visitor.visitCount === 0) throw new ApiError(404, 'Visitor not found');
    const upTo = before === undefined ? visitor.visitCount : await this.seqBefore(visitor, before);
    const page = pageOf(upTo);
    const [older, newer] = upTo > 0 ? await Promise.all([this.store.visits.page(visitorId, page - 1), this.store.visits.page(visitorId, page)]) : [[], []];
    const newest = [...older, ...newer]
      .filter((v) => v.seq <= upTo)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, VISITS_PAGE_SIZE);
    const events = await Promise.all(newest.map((v) => this.store.events.get(v.requestId)));
    const visits = newest.map((v, i) => visitView(v, events[i]?.signalsJson));
    return { visits, totalVisits: visitor.visitCount, firstSeenAt: visitor.firstSeenAt };
  }

  /** The highest sequence number strictly before the cursor (a visit id or a Unix ms timestamp). */
  private async seqBefore(visitor: VisitorDoc, before: string): Promise<number> {
    if (/^\d{1,15}$/.test(before)) return this.seqBeforeTime(visitor, Number(before));
    const seq = seqOfVisitId(before);
    if (seq === null || seq > visitor.visitCount) throw new ApiError(400, 'before: must be a visit id of this visitor or a Unix ms timestamp');
    const page = await this.store.visits.page(visitor._id, pageOf(seq));
    if (!page.some((v) => v.id === before)) throw new ApiError(400, 'before: must be a visit id of this visitor or a Unix ms timestamp');
    return seq - 1;
  }

  /** Binary search over pages (point reads): visits are appended in time order. */
  private async seqBeforeTime(visitor: VisitorDoc, t: number): Promise<number> {
    let lo = 0;
    let hi = pageOf(visitor.visitCount);
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const visits = await this.store.visits.page(visitor._id, mid);
      const earliest = Math.min(...visits.map((v) => v.timestamp));
      // An empty page was emptied by retention: all its visits were older than any kept.
      if (!visits.length || earliest < t) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (best < 0) return 0;
    const visits = await this.store.visits.page(visitor._id, best);
    return Math.max(0, ...visits.filter((v) => v.timestamp < t).map((v) => v.seq));
  }
}

const history = (v: VisitorDoc): VisitorHistory => ({
  components: [v.components, ...(v.previousComponents ? [v.previousComponents] : [])],
  networks: v.networks ?? [],
  tokens: v.tokens ?? [],
  firstSeenAt: v.firstSeenAt,
});

/** Request signals carry `{value, duration}`; stored and returned signals hold the value alone. */
function unwrap(signals: IdentifyRequest['signals']): Signals {
  const out: Record<string, unknown> = {};
  for (const [name, result] of Object.entries(signals) as [SignalName, { value: unknown } | undefined][]) {
    if (result) out[name] = result.value;
  }
  return out as Signals;
}

function fullEvent(e: EventDoc): FullEvent {
  return {
    requestId: e._id,
    visitorId: e.visitorId,
    confidence: e.confidence,
    botProbability: e.botProbability,
    suspectScore: e.suspectScore,
    ...(e.linkedId !== null ? { linkedId: e.linkedId } : {}),
    ...(e.tagJson !== null ? { tag: JSON.parse(e.tagJson) as Record<string, unknown> } : {}),
    suspect: e.suspect,
    ip: e.ip,
    url: e.url,
    referrer: e.referrer,
    verdicts: e.verdicts as FullEvent['verdicts'],
    signals: JSON.parse(e.signalsJson) as FullEvent['signals'],
    timestamp: e.timestamp,
    createdAt: e.createdAt.toISOString(),
  };
}

function visitView(v: StoredVisit, signalsJson: string | undefined): VisitHistory['visits'][number] {
  if (!signalsJson) throw new Error(`visit ${v.id} has no event ${v.requestId}`);
  return {
    id: v.id,
    timestamp: v.timestamp,
    country: v.country,
    city: v.city,
    region: v.region,
    asn: v.asn,
    asnOrg: v.asnOrg,
    asnCategory: v.asnCategory as VisitHistory['visits'][number]['asnCategory'],
    botProbability: v.botProbability,
    confidence: v.confidence,
    riskFactors: v.riskFactors as VisitHistory['visits'][number]['riskFactors'],
    signals: JSON.parse(signalsJson) as VisitHistory['visits'][number]['signals'],
  };
}
