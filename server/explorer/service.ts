// The dashboard's events explorer and visitor timeline: a project's events
// through event search (server/search/, narrowed to the project) and a
// visitor's visits through the visit history (server/visitors/), both
// as table summaries of the signed-in account's data only; a visitor's
// related visitors in a project (server/visitors/related.ts); and the
// overview's hourly counts, from the counters identify keeps (metering/).
import type { z } from 'zod';
import type { BotCategory } from '../../contract/bots.js';
import {
  HOURLY_DEFAULT_HOURS,
  HOURLY_MAX_HOURS,
  type ExplorerQuerySchema,
  type ProjectHourlySchema,
  type VisitorTimelineSchema,
} from '../../contract/explorer.js';
import { VISITS_PAGE_SIZE } from '../../contract/visits.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import type { EventSearchService } from '../search/service.js';
import type { Store } from '../store/index.js';
import { utcDay } from '../store/usage.js';
import type { VisitHistoryService } from '../visitors/history.js';
import type { RelatedVisitors, RelatedVisitorsService } from '../visitors/related.js';
import { eventSummary, visitSummary, type EventSummary } from './views.js';

type ExplorerQuery = z.output<typeof ExplorerQuerySchema>;
type VisitorTimeline = z.infer<typeof VisitorTimelineSchema>;
type ProjectHourly = z.infer<typeof ProjectHourlySchema>;

const HOUR_MS = 3_600_000;
const hourOf = (ms: number) => ms - (ms % HOUR_MS);

export class ExplorerService {
  constructor(
    private readonly store: Store,
    private readonly search: EventSearchService,
    private readonly visits: VisitHistoryService,
    private readonly related: RelatedVisitorsService,
    private readonly meter: Meter,
    private readonly clock: Clock,
  ) {}

  /**
   * Identifications, bots and suspects per hour of the window (`hours` hours
   * ending with the one holding `end`), and its bots by category. Only hours
   * from the oldest kept to the current one are read: others hold zeros.
   */
  async hourly(accountId: string, projectId: string, q: { end?: number | undefined; hours?: number | undefined }): Promise<ProjectHourly> {
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
    const now = hourOf(this.clock.now());
    const keptSince = now - (HOURLY_MAX_HOURS - 1) * HOUR_MS;
    const last = hourOf(q.end ?? now);
    // No hour before 1970: a window ending that early holds fewer.
    const first = Math.max(0, last - ((q.hours ?? HOURLY_DEFAULT_HOURS) - 1) * HOUR_MS);
    const [from, to] = [Math.max(first, keptSince), Math.min(last, now)];
    const docs = from <= to ? await this.meter.hourly(projectId, utcDay(from), utcDay(to)) : [];
    const hours: ProjectHourly['hours'] = [];
    const bots = new Map<BotCategory, { good: number; bad: number }>();
    for (let t = first; t <= last; t += HOUR_MS) {
      const counts = { start: t, identifications: 0, bots: 0, suspects: 0 };
      hours.push(counts);
      if (t < from || t > to) continue;
      const [day, field] = [utcDay(t), `h${String(new Date(t).getUTCHours()).padStart(2, '0')}`];
      for (const doc of docs) {
        const h = doc.day === day ? doc.hours[field] : undefined;
        if (!h) continue;
        counts.identifications += h.n ?? 0;
        counts.bots += h.bots ?? 0;
        counts.suspects += h.suspects ?? 0;
        for (const kind of ['good', 'bad'] as const) {
          for (const [category, n] of Object.entries(h[kind] ?? {})) {
            const row = bots.get(category as BotCategory) ?? { good: 0, bad: 0 };
            row[kind] += n;
            bots.set(category as BotCategory, row);
          }
        }
      }
    }
    const botCategories = [...bots]
      .map(([category, n]) => ({ category, ...n }))
      .sort((a, b) => b.good + b.bad - (a.good + a.bad) || (a.category < b.category ? -1 : 1));
    return { hours, botCategories, keptSince };
  }

  /** Another account's project is 404 exactly like a missing one. */
  async projectEvents(accountId: string, projectId: string, q: ExplorerQuery): Promise<{ events: EventSummary[]; paginationKey?: string }> {
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
    const page = await this.search.search(accountId, q, projectId);
    return { events: page.events.map(eventSummary), ...(page.paginationKey !== undefined ? { paginationKey: page.paginationKey } : {}) };
  }

  /**
   * A visitor's related visitors in one of the account's projects (another
   * account's project is 404 like a missing one, before the visitor is read);
   * the visitor's 404 and the cursor's 400 as the related-visitors service answers them.
   */
  async relatedVisitors(
    accountId: string,
    projectId: string,
    visitorId: string,
    q: { limit?: number | undefined; paginationKey?: string | undefined },
  ): Promise<RelatedVisitors> {
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
    return this.related.answer(accountId, projectId, visitorId, q.limit, q.paginationKey);
  }

  /** The visit history's 404 (unknown, or another account's visitor) and 400 (cursor) as they are. */
  async timeline(accountId: string, visitorId: string, before: string | undefined): Promise<VisitorTimeline> {
    const history = await this.visits.history(accountId, visitorId, before);
    const visits = history.visits.map(visitSummary);
    const last = visits[visits.length - 1];
    return {
      visitorId: history.visitorId,
      mergedFrom: history.mergedFrom,
      totalVisits: history.totalVisits,
      firstSeenAt: history.firstSeenAt,
      visits,
      ...(visits.length === VISITS_PAGE_SIZE && last ? { nextBefore: last.id } : {}),
    };
  }
}
