// The review queue and labels: events a rule sent to review wait in the
// search index's `w|<project>` range until an analyst labels them (then
// `k|<project>`); a label is stored on the event, re-indexed for search,
// sent to the project's webhooks, recorded in the audit log, and can put
// the event's visitor, linkedId or IP on a list in the same step.
import type { z } from 'zod';
import type { LabelRequestSchema, LabelSchema, ReviewItemSchema } from '../../contract/decisions.js';
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { decodePaginationKey, encodePaginationKey } from '../search/service.js';
import { ulidOf, type IndexEntry } from '../store/eventIndex.js';
import type { EventDoc, StoredLabel } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { VisitorAliases } from '../visitors/aliases.js';
import type { WebhooksService } from '../webhooks/service.js';
import type { ListsService } from './listsService.js';

type ReviewItem = z.infer<typeof ReviewItemSchema>;
type Label = z.infer<typeof LabelSchema>;
type LabelRequest = z.output<typeof LabelRequestSchema>;

export interface ReviewQuery {
  status: 'pending' | 'labeled' | 'all';
  limit: number;
  paginationKey?: string | undefined;
}

const EXPORT_PAGE = 500;

export class ReviewsService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly lists: ListsService,
    private readonly webhooks: WebhooksService,
    private readonly aliases: VisitorAliases,
  ) {}

  /** The queue newest first: pending (`w`), labeled (`k`) or both, merged by time. */
  async queue(accountId: string, projectId: string, q: ReviewQuery): Promise<{ items: ReviewItem[]; paginationKey?: string }> {
    await this.project(accountId, projectId);
    const hi = q.paginationKey === undefined ? '~' : decodePaginationKey(q.paginationKey);
    const kinds = q.status === 'pending' ? ['w'] : q.status === 'labeled' ? ['k'] : ['w', 'k'];
    const ranges = await Promise.all(kinds.map((k) => this.store.eventIndex.range(`${accountId}|${k}|${projectId}`, '', hi, 'desc', q.limit + 1)));
    const merged = ranges.flat().sort((a, b) => (ulidOf(a.r) < ulidOf(b.r) ? 1 : -1));
    const page = merged.slice(0, q.limit);
    const events = new Map((await this.store.events.getMany(page.map((e) => e.r))).map((e) => [e._id, e]));
    const items = page.flatMap((e) => {
      const event = events.get(e.r);
      return event ? [itemOf(event)] : [];
    });
    const last = page[page.length - 1];
    return { items, ...(merged.length > q.limit && last && { paginationKey: encodePaginationKey(ulidOf(last.r)) }) };
  }

  async label(accountId: string, projectId: string, requestId: string, body: LabelRequest): Promise<Label> {
    await this.project(accountId, projectId);
    const event = await this.store.events.get(requestId);
    if (!event || event.accountId !== accountId || event.projectId !== projectId) throw new ApiError('event_not_found');
    // Every list is checked before anything changes.
    const additions = await Promise.all(
      (body.addTo ?? []).map(async ({ list, field }) => {
        const found = await this.lists.get(accountId, projectId, list);
        if (found.kind !== field) throw new ApiError('list_kind_mismatch', `List ${list} holds ${found.kind} values, not ${field}`);
        // A visitor merged since is identified as its survivor from now on: that is the id a rule will see.
        const visitorId = async () => (await this.aliases.survivor(accountId, event.visitorId))?._id ?? event.visitorId;
        const value = field === 'visitorId' ? await visitorId() : field === 'ip' ? event.ip : event.linkedId;
        if (value === null) throw new ApiError('list_kind_mismatch', 'The event has no linkedId');
        return { list, value };
      }),
    );
    const label: StoredLabel = {
      verdict: body.verdict,
      note: body.note ?? '',
      labeledAt: new Date(this.clock.now()),
      labeledBy: await this.audit.actorLabel(),
    };
    const labeled = await this.audit.change(
      accountId,
      'event.label',
      {
        target: { type: 'event', id: requestId },
        before: event.label ? { label: labelView(event.label) } : null,
        after: { label: labelView(label), addedTo: additions.map((a) => a.list) },
      },
      async (stamp) => {
        if (!(await this.store.events.update(requestId, { label }, stamp))) return false;
        // Each addition is a change of its list with an entry of its own.
        for (const { list, value } of additions) {
          await this.lists.changeEntries(accountId, projectId, list, { add: [{ value, note: `${body.verdict}: ${requestId}` }] });
        }
        return true;
      },
    );
    if (!labeled) throw new ApiError('event_not_found');
    await this.webhooks.resend(accountId, projectId, requestId);
    return labelView(label);
  }

  /** Every labeled event of the project as JSON lines, oldest first; `since`: labels made at or after it. */
  async export(accountId: string, projectId: string, since: number | undefined): Promise<string> {
    await this.project(accountId, projectId);
    const lines: string[] = [];
    let lo = '';
    for (;;) {
      const entries: IndexEntry[] = await this.store.eventIndex.range(`${accountId}|k|${projectId}`, lo, '~', 'asc', EXPORT_PAGE);
      for (const e of await this.store.events.getMany(entries.map((x) => x.r))) {
        if (!e.label || (since !== undefined && e.label.labeledAt.getTime() < since)) continue;
        lines.push(JSON.stringify(exportLine(e, e.label)));
      }
      if (entries.length < EXPORT_PAGE) break;
      lo = ulidOf(entries[entries.length - 1]!.r);
    }
    return lines.map((l) => `${l}\n`).join('');
  }

  private async project(accountId: string, projectId: string): Promise<void> {
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
  }
}

const labelView = (l: StoredLabel): Label => ({ verdict: l.verdict, note: l.note, labeledAt: l.labeledAt.toISOString(), labeledBy: l.labeledBy });

function itemOf(e: EventDoc): ReviewItem {
  return {
    requestId: e._id,
    visitorId: e.visitorId,
    ...(e.linkedId !== null && { linkedId: e.linkedId }),
    ip: e.ip,
    country: typeof e.ipLocation.country === 'string' ? e.ipLocation.country : '',
    url: e.url,
    timestamp: e.timestamp,
    suspectScore: e.suspectScore,
    ...(e.decision?.ruleId !== undefined && { ruleId: e.decision.ruleId }),
    ...(e.label && { label: labelView(e.label) }),
  };
}

/** The feedback that tunes weights later: the label with what the event scored. */
function exportLine(e: EventDoc, label: StoredLabel) {
  return {
    requestId: e._id,
    visitorId: e.visitorId,
    ...(e.linkedId !== null && { linkedId: e.linkedId }),
    timestamp: e.timestamp,
    label: labelView(label),
    decision: e.decision ?? null,
    confidence: e.confidence,
    botProbability: e.botProbability,
    suspectScore: e.suspectScore,
    riskFactors: e.riskFactors,
    ip: e.ip,
    country: typeof e.ipLocation.country === 'string' ? e.ipLocation.country : '',
  };
}
