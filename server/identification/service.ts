// POST /v1/identify end to end: allowlist → metering → matching → risk →
// event and visit stored → compact result. Also the full-event and
// visit-history reads, which follow merged visitors to their survivor.
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import type { z } from 'zod';
import { UNIX_MS_MAX } from '../../contract/common.js';
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
import type { ProjectDoc } from '../store/projects.js';
import type { VisitorDoc } from '../store/visitors.js';
import { pageOf, VISITS_PER_PAGE, type StoredVisit } from '../store/visits.js';
import { coverage, extractComponents, type Signals } from './components.js';
import { confidenceOf } from './confidence.js';
import type { IdentifyHooks, IdentifyResponse } from './hooks.js';
import { link, remembered, type Visit } from './linker.js';
import { StoreIndex } from './storeIndex.js';
import { makeVisitId, seqOfVisitId } from './visitId.js';

type IdentifyRequest = z.infer<typeof IdentifyRequestSchema>;
type IdentifyResult = z.infer<typeof IdentifyResultSchema>;
type FullEvent = z.infer<typeof FullEventSchema>;
type VisitHistory = z.infer<typeof VisitHistorySchema>;

/** Visitors followed through merges at most: a bound on the reads of one history. */
const ALIASES_CAP = 64;

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

/** A `before` cursor that is a Unix ms time (decimal digits up to the latest time an id can carry), or null. */
const timeCursor = (before: string): number | null => (/^\d{1,15}$/.test(before) && Number(before) <= UNIX_MS_MAX ? Number(before) : null);

export class IdentificationService {
  constructor(
    private readonly store: Store,
    private readonly meter: Meter,
    private readonly clock: Clock,
    private readonly hooks: IdentifyHooks = {},
  ) {}

  async identify(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, origin: string | undefined): Promise<IdentifyResponse> {
    const project = await this.store.projects.byId(key.projectId);
    checkAllowlist(project?.allowedDomains ?? [], key.type, body.url, origin);
    const reservation = await this.meter.admit(key);
    let result: IdentifyResult;
    try {
      result = await this.run(key, body, edge, project);
    } catch (err) {
      await reservation.release();
      throw err;
    }
    return this.hooks.respond ? this.hooks.respond(project, result) : result;
  }

  private async run(key: ApiKeyDoc, body: IdentifyRequest, edge: EdgeFacts, project: ProjectDoc | null): Promise<IdentifyResult> {
    const now = this.clock.now();
    const accountId = key.accountId;
    const signals = unwrap(body.signals);
    const components = extractComponents(signals);
    const token = signals.deviceToken?.token;
    const visit: Visit = { components, tokenHash: token ? sha(token) : null, network: edge.network, incognito: signals.incognito?.likely ?? false, now };

    const index = new StoreIndex(this.store, accountId, now);
    const match = await link(index, visit);
    const activity = { t: now, ip: edge.ip, country: edge.location.country };
    const confidence = confidenceOf({ kind: match.kind, p: match.p, coverage: coverage(components) });
    const requestId = `req_${ulid(now)}`;
    // Risk needs the visitor's recent activity with this visit, and the visit's summary needs risk: both are decided inside the record.
    let risk!: ReturnType<typeof assessRisk>;
    const rec = await index.record(match, visit, activity, VELOCITY_WINDOWS['24h'], (facts) => {
      risk = assessRisk(signals, edge, facts.recent, now);
      return {
        seq: facts.seq,
        requestId,
        id: makeVisitId(now, facts.seq),
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
      };
    });
    const visitId = makeVisitId(now, rec.seq);
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
      visitSeq: rec.seq,
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
    await Promise.all([
      index.remember(remembered(rec.before, match, visit, match.kind === 'new')),
      this.store.events.insert(event, this.hooks.withEvent?.(project, event)),
    ]);
    this.hooks.stored?.(project, event);

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

  /** The account's visitor `visitorId` resolves to (itself, or the visitor it was merged into); null when none. */
  async survivor(accountId: string, visitorId: string): Promise<VisitorDoc | null> {
    let v = await this.store.visitors.get(visitorId);
    for (let hops = 0; v?.mergedInto && hops < 4; hops++) v = await this.store.visitors.get(v.mergedInto);
    return v && v.accountId === accountId && !v.mergedInto ? v : null;
  }

  /** Full events with their visitor ids resolved through merges (one read per distinct visitor). */
  async fullEvents(accountId: string, events: EventDoc[]): Promise<FullEvent[]> {
    const ids = [...new Set(events.map((e) => e.visitorId))];
    const survivors = new Map(await Promise.all(ids.map(async (id) => [id, (await this.survivor(accountId, id))?._id ?? id] as const)));
    return events.map((e) => fullEvent(e, survivors.get(e.visitorId) ?? e.visitorId));
  }

  async getEvent(accountId: string, requestId: string): Promise<FullEvent> {
    const e = await this.store.events.get(requestId);
    if (!e || e.accountId !== accountId) throw new ApiError(404, 'Event not found');
    return (await this.fullEvents(accountId, [e]))[0]!;
  }

  async updateEvent(
    accountId: string,
    requestId: string,
    patch: { suspect?: boolean; linkedId?: string | null; tag?: Record<string, unknown> | null },
  ): Promise<FullEvent> {
    const e = await this.store.events.get(requestId);
    if (!e || e.accountId !== accountId) throw new ApiError(404, 'Event not found');
    const set: Partial<Pick<EventDoc, 'suspect' | 'linkedId' | 'tagJson'>> = {};
    if (patch.suspect !== undefined) set.suspect = patch.suspect;
    if (patch.linkedId !== undefined) set.linkedId = patch.linkedId;
    if (patch.tag !== undefined) set.tagJson = patch.tag === null ? null : JSON.stringify(patch.tag);
    const updated = await this.store.events.update(requestId, set);
    if (!updated) throw new ApiError(404, 'Event not found');
    return (await this.fullEvents(accountId, [updated]))[0]!;
  }

  async visitHistory(accountId: string, visitorId: string, before: string | undefined): Promise<VisitHistory> {
    const visitor = await this.survivor(accountId, visitorId);
    if (!visitor || visitor.visitCount + (visitor.mergedVisits ?? 0) === 0) throw new ApiError(404, 'Visitor not found');
    const merged = await this.aliasesOf(visitor);
    const newest = merged.length
      ? await this.newestOfAll([visitor, ...merged], before)
      : (await this.newestOf(visitor, before)).map((v) => ({ ...v, source: visitor._id }));
    const events = await Promise.all(newest.map((v) => this.store.events.get(v.requestId)));
    // A visit whose event is not there (still being stored, or just deleted by retention) is left out.
    const visits = newest.flatMap((v, i) => {
      const e = events[i];
      return e ? [{ ...visitView(v, e.signalsJson), ...(v.source !== visitor._id ? { originalVisitorId: v.source } : {}) }] : [];
    });
    // Counted from each merged visitor's own visits, exact whatever raced with the merge.
    const totalVisits = visitor.visitCount + merged.reduce((n, m) => n + m.visitCount, 0);
    return { visitorId: visitor._id, mergedFrom: merged.map((m) => m._id), visits, totalVisits, firstSeenAt: visitor.firstSeenAt };
  }

  /**
   * The visitors merged into `survivor`, however the merges interleaved: its
   * mergedFrom lists, theirs, and so on, each kept only while it still
   * resolves to the survivor (a merge racing with another can leave a list
   * one hop short, an undone one a stale entry for a moment).
   */
  async aliasesOf(survivor: VisitorDoc): Promise<VisitorDoc[]> {
    const found = new Map<string, VisitorDoc>();
    let frontier = survivor.mergedFrom ?? [];
    while (frontier.length && found.size < ALIASES_CAP) {
      const docs = (await Promise.all(frontier.filter((id) => !found.has(id) && id !== survivor._id).map((id) => this.store.visitors.get(id)))).filter(
        (v): v is VisitorDoc => v !== null,
      );
      for (const d of docs) found.set(d._id, d);
      frontier = docs.flatMap((d) => d.mergedFrom ?? []);
    }
    const kept = await Promise.all([...found.values()].map(async (d) => ((await this.survivor(survivor.accountId, d._id))?._id === survivor._id ? d : null)));
    return kept.filter((d): d is VisitorDoc => d !== null);
  }

  /** A visitor's visit page: the stored page, and the newest visits, which the visitor document holds. */
  private async visitPage(visitor: VisitorDoc, page: number): Promise<StoredVisit[]> {
    if (page < 0) return [];
    const held = (visitor.visits ?? []).filter((v) => pageOf(v.seq) === page);
    const stored = held.length === VISITS_PER_PAGE ? [] : await this.store.visits.page(visitor._id, page);
    return [...stored.filter((v) => !held.some((h) => h.seq === v.seq)), ...held];
  }

  /** One visitor's newest visits before the cursor, by its own sequence numbers. */
  private async newestOf(visitor: VisitorDoc, before: string | undefined): Promise<StoredVisit[]> {
    const upTo = before === undefined ? visitor.visitCount : await this.seqBefore(visitor, before);
    const page = pageOf(upTo);
    const [older, newer] = upTo > 0 ? await Promise.all([this.visitPage(visitor, page - 1), this.visitPage(visitor, page)]) : [[], []];
    return [...older, ...newer]
      .filter((v) => v.seq <= upTo)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, VISITS_PAGE_SIZE);
  }

  /**
   * A merged visitor's history: the newest visits of it and of the visitors
   * merged into it, newest first by time (then visit id). A visit-id cursor
   * must name a visit of one of them.
   */
  private async newestOfAll(sources: VisitorDoc[], before: string | undefined) {
    let cursor: { t: number; id: string } | null = null;
    const time = before === undefined ? null : timeCursor(before);
    if (time !== null) cursor = { t: time, id: '' };
    else if (before !== undefined) {
      const seq = seqOfVisitId(before);
      const pages = seq === null ? [] : await Promise.all(sources.filter((s) => seq <= s.visitCount).map((s) => this.visitPage(s, pageOf(seq))));
      const found = pages.flat().find((v) => v.id === before);
      if (!found) throw new ApiError(400, 'before: must be a visit id of this visitor or a Unix ms timestamp');
      cursor = { t: found.timestamp, id: found.id };
    }
    const older = (v: StoredVisit) => !cursor || v.timestamp < cursor.t || (v.timestamp === cursor.t && v.id < cursor.id);
    const lists = await Promise.all(
      sources.map(async (s) => {
        // Visits up to the cursor's millisecond, then those strictly older than the cursor.
        const upTo = cursor ? await this.seqBeforeTime(s, cursor.t + 1) : s.visitCount;
        const page = pageOf(upTo);
        const [a, b] = upTo > 0 ? await Promise.all([this.visitPage(s, page - 1), this.visitPage(s, page)]) : [[], []];
        return [...a, ...b].filter((v) => v.seq <= upTo && older(v)).map((v) => ({ ...v, source: s._id }));
      }),
    );
    return lists
      .flat()
      .sort((x, y) => y.timestamp - x.timestamp || (y.id > x.id ? 1 : -1))
      .slice(0, VISITS_PAGE_SIZE);
  }

  /** The highest sequence number strictly before the cursor (a visit id or a Unix ms timestamp). */
  private async seqBefore(visitor: VisitorDoc, before: string): Promise<number> {
    const time = timeCursor(before);
    if (time !== null) return this.seqBeforeTime(visitor, time);
    const seq = seqOfVisitId(before);
    if (seq === null || seq > visitor.visitCount) throw new ApiError(400, 'before: must be a visit id of this visitor or a Unix ms timestamp');
    const page = await this.visitPage(visitor, pageOf(seq));
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
      const visits = await this.visitPage(visitor, mid);
      const earliest = Math.min(...visits.map((v) => v.timestamp));
      // An empty page was emptied by retention: all its visits were older than any kept.
      if (!visits.length || earliest < t) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (best < 0) return 0;
    const visits = await this.visitPage(visitor, best);
    return Math.max(0, ...visits.filter((v) => v.timestamp < t).map((v) => v.seq));
  }
}

/** Request signals carry `{value, duration}`; stored and returned signals hold the value alone. */
function unwrap(signals: IdentifyRequest['signals']): Signals {
  const out: Record<string, unknown> = {};
  for (const [name, result] of Object.entries(signals) as [SignalName, { value: unknown } | undefined][]) {
    if (result) out[name] = result.value;
  }
  return out as Signals;
}

function fullEvent(e: EventDoc, visitorId: string): FullEvent {
  return {
    requestId: e._id,
    visitorId,
    ...(visitorId !== e.visitorId ? { originalVisitorId: e.visitorId } : {}),
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

function visitView(v: StoredVisit, signalsJson: string): VisitHistory['visits'][number] {
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
