// Identification events as a backend reads them: GET and PATCH
// /v1/events/:requestId, the demo's event view, webhook payloads and search
// results. An event names the visitor identify returned; read now, it names
// that visitor's survivor when it has since been merged (originalVisitorId
// keeps the id identify returned).
import type { AuditLog } from '../audit/log.js';
import type { z } from 'zod';
import type { FullEventSchema } from '../../contract/events.js';
import { ApiError } from '../errors.js';
import { NO_DECISION, type EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { VisitorAliases } from '../visitors/aliases.js';
import type { RelatedVisitorsService } from '../visitors/related.js';

export type FullEvent = z.infer<typeof FullEventSchema>;

export interface EventPatch {
  suspect?: boolean;
  linkedId?: string | null;
  tag?: Record<string, unknown> | null;
}

export class EventsService {
  constructor(
    private readonly store: Store,
    private readonly aliases: VisitorAliases,
    private readonly audit: AuditLog,
    private readonly related: RelatedVisitorsService,
  ) {}

  /** Full events with their visitor ids resolved through merges (one walk per distinct visitor). */
  async full(accountId: string, events: EventDoc[]): Promise<FullEvent[]> {
    const ids = [...new Set(events.map((e) => e.visitorId))];
    const now = new Map(
      await Promise.all(
        ids.map(async (id) => {
          const survivor = await this.aliases.survivor(accountId, id);
          // A visitor being deleted: the ids as identify answered them.
          return [id, survivor ? { visitorId: survivor._id, highRecallVisitorId: await this.aliases.highRecallOf(survivor) } : null] as const;
        }),
      ),
    );
    return events.map((e) => fullEvent(e, now.get(e.visitorId) ?? { visitorId: e.visitorId, highRecallVisitorId: e.highRecallVisitorId ?? e.visitorId }));
  }

  /** Another account's event is 404 exactly like a missing one. */
  async get(accountId: string, requestId: string): Promise<FullEvent> {
    return (await this.full(accountId, [await this.doc(accountId, requestId)]))[0]!;
  }

  /** The event as GET /v1/events/:requestId answers it: with its visitor's related visitors counted in the event's project. */
  async getWithRelated(accountId: string, requestId: string): Promise<FullEvent> {
    const e = await this.doc(accountId, requestId);
    const [event, relatedVisitors] = await Promise.all([this.full(accountId, [e]), this.related.count(accountId, e.projectId, e.visitorId)]);
    return { ...event[0]!, relatedVisitors };
  }

  private async doc(accountId: string, requestId: string): Promise<EventDoc> {
    const e = await this.store.events.get(requestId);
    if (!e || e.accountId !== accountId) throw new ApiError('event_not_found');
    return e;
  }

  async update(accountId: string, requestId: string, patch: EventPatch): Promise<FullEvent> {
    const e = await this.store.events.get(requestId);
    if (!e || e.accountId !== accountId) throw new ApiError('event_not_found');
    const set: Partial<Pick<EventDoc, 'suspect' | 'linkedId' | 'tagJson'>> = {};
    if (patch.suspect !== undefined) set.suspect = patch.suspect;
    if (patch.linkedId !== undefined) set.linkedId = patch.linkedId;
    if (patch.tag !== undefined) set.tagJson = patch.tag === null ? null : JSON.stringify(patch.tag);
    const fields = (d: EventDoc) => ({ suspect: d.suspect, linkedId: d.linkedId, tag: d.tagJson === null ? null : (JSON.parse(d.tagJson) as unknown) });
    const [before, after] = [fields(e), fields({ ...e, ...set })];
    const updated =
      JSON.stringify(before) === JSON.stringify(after)
        ? await this.store.events.update(requestId, set)
        : await this.audit.change(accountId, 'event.update', { target: { type: 'event', id: requestId }, before, after }, (stamp) =>
            this.store.events.update(requestId, set, stamp),
          );
    if (!updated) throw new ApiError('event_not_found');
    return (await this.full(accountId, [updated]))[0]!;
  }
}

function fullEvent(e: EventDoc, { visitorId, highRecallVisitorId }: { visitorId: string; highRecallVisitorId: string }): FullEvent {
  return {
    requestId: e._id,
    visitorId,
    ...(visitorId !== e.visitorId ? { originalVisitorId: e.visitorId } : {}),
    highRecallVisitorId,
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
    decision: e.decision ?? NO_DECISION,
    ...(e.label && {
      label: { verdict: e.label.verdict, note: e.label.note, labeledAt: e.label.labeledAt.toISOString(), labeledBy: e.label.labeledBy },
    }),
    createdAt: e.createdAt.toISOString(),
  };
}
