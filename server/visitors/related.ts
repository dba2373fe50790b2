// GET /v1/visitors/:visitorId/related: the same machine's other browsers in
// a project (server/identification/related.ts judges them). Three reads:
// the visitor (through its merges), its lists in the project, the visitors
// on them; a fourth only when some of those were merged into visitors not
// read yet.
import type { z } from 'zod';
import { RELATED_PAGE_SIZE, RELATED_THRESHOLD, type RelatedVisitorsSchema } from '../../contract/visitors.js';
import { ApiError } from '../errors.js';
import { toRecord } from '../identification/record.js';
import { relatedKeysOf, relatedOf, type Relative } from '../identification/related.js';
import type { Store } from '../store/index.js';
import type { VisitorAliases } from './aliases.js';

export interface RelatedPage {
  visitorId: string;
  relatives: Relative[];
  /** The cursor of the next page; absent on the last. */
  paginationKey?: string;
}

/** A page as GET /v1/visitors/:visitorId/related and the dashboard's route answer it. */
export type RelatedVisitors = z.infer<typeof RelatedVisitorsSchema>;

const CURSOR = /^(\d{1,16})\.(iq_[0-9A-HJKMNP-TV-Z]{26})$/;
const cursorOf = (r: Relative) => `${r.lastSeenTogetherAt}.${r.visitorId}`;

export class RelatedVisitorsService {
  constructor(
    private readonly store: Store,
    private readonly aliases: VisitorAliases,
  ) {}

  /** Every related visitor of the visitor in the project, the most recently seen together first. */
  async all(accountId: string, projectId: string, visitorId: string): Promise<{ visitorId: string; relatives: Relative[] }> {
    const survivor = await this.aliases.survivor(accountId, visitorId);
    if (!survivor) throw new ApiError('visitor_not_found');
    const self = toRecord(survivor);
    const lists = await this.store.identity.relatedLists(accountId, relatedKeysOf(projectId, self));
    const survivors = await this.aliases.survivors(
      accountId,
      lists.flatMap((l) => l.visitorIds),
    );
    return { visitorId: survivor._id, relatives: relatedOf(self, lists, (id) => (survivors.has(id) ? toRecord(survivors.get(id)!) : null)) };
  }

  /** A page of them: `limit` after the relative the cursor names (its time and id, so that a page holds when others move). */
  async page(accountId: string, projectId: string, visitorId: string, limit = RELATED_PAGE_SIZE, paginationKey?: string): Promise<RelatedPage> {
    const after = paginationKey === undefined ? null : CURSOR.exec(paginationKey);
    if (paginationKey !== undefined && !after) throw new ApiError('validation_failed', 'paginationKey: not one this endpoint gave');
    const { visitorId: id, relatives } = await this.all(accountId, projectId, visitorId);
    const rest = after
      ? relatives.filter((r) => r.lastSeenTogetherAt < Number(after[1]) || (r.lastSeenTogetherAt === Number(after[1]) && r.visitorId > after[2]!))
      : relatives;
    const page = rest.slice(0, limit);
    return { visitorId: id, relatives: page, ...(rest.length > limit ? { paginationKey: cursorOf(page[page.length - 1]!) } : {}) };
  }

  /** A page as the routes answer it (the threshold with it). */
  async answer(accountId: string, projectId: string, visitorId: string, limit?: number, paginationKey?: string): Promise<RelatedVisitors> {
    const page = await this.page(accountId, projectId, visitorId, limit, paginationKey);
    return {
      visitorId: page.visitorId,
      threshold: RELATED_THRESHOLD,
      relatedVisitors: page.relatives,
      ...(page.paginationKey ? { paginationKey: page.paginationKey } : {}),
    };
  }

  /** How many related visitors the visitor has in the project (the full event's `relatedVisitors`); 0 when it is gone. */
  async count(accountId: string, projectId: string, visitorId: string): Promise<number> {
    try {
      return (await this.all(accountId, projectId, visitorId)).relatives.length;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'visitor_not_found') return 0;
      throw err;
    }
  }
}
