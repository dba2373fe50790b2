// The dashboard's events explorer and visitor timeline: a project's events
// through event search (server/search/, narrowed to the project) and a
// visitor's visits through the visit history (server/visitors/), both
// as table summaries of the signed-in account's data only.
import type { z } from 'zod';
import type { ExplorerQuerySchema, VisitorTimelineSchema } from '../../contract/explorer.js';
import { VISITS_PAGE_SIZE } from '../../contract/visits.js';
import { ApiError } from '../errors.js';
import type { EventSearchService } from '../search/service.js';
import type { Store } from '../store/index.js';
import type { VisitHistoryService } from '../visitors/history.js';
import { eventSummary, visitSummary, type EventSummary } from './views.js';

type ExplorerQuery = z.output<typeof ExplorerQuerySchema>;
type VisitorTimeline = z.infer<typeof VisitorTimelineSchema>;

export class ExplorerService {
  constructor(
    private readonly store: Store,
    private readonly search: EventSearchService,
    private readonly visits: VisitHistoryService,
  ) {}

  /** Another account's project is 404 exactly like a missing one. */
  async projectEvents(accountId: string, projectId: string, q: ExplorerQuery): Promise<{ events: EventSummary[]; paginationKey?: string }> {
    if (!(await this.store.projects.ofAccount(accountId, projectId))) throw new ApiError('project_not_found');
    const page = await this.search.search(accountId, q, projectId);
    return { events: page.events.map(eventSummary), ...(page.paginationKey !== undefined ? { paginationKey: page.paginationKey } : {}) };
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
