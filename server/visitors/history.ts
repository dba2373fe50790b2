// A visitor's visits, newest first (GET /v1/demo/visits/:visitorId and the
// dashboard's timeline): 20 a page, with a cursor that is a visit id or a
// Unix ms time. A merged visitor answers with its survivor's history, which
// includes the visits of every visitor merged into it.
import type { z } from 'zod';
import { UNIX_MS_MAX } from '../../contract/common.js';
import { VISITS_PAGE_SIZE, type VisitHistorySchema } from '../../contract/visits.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/index.js';
import type { VisitorDoc } from '../store/visitors.js';
import { pageOf, VISITS_PER_PAGE, type StoredVisit } from '../store/visits.js';
import { seqOfVisitId } from './visitId.js';
import type { VisitorAliases } from './aliases.js';

export type VisitHistory = z.infer<typeof VisitHistorySchema>;
type VisitView = VisitHistory['visits'][number];

const BAD_CURSOR = 'before: must be a visit id of this visitor or a Unix ms timestamp';

/** A `before` cursor that is a Unix ms time (decimal digits up to the latest time an id can carry), or null. */
const timeCursor = (before: string): number | null => (/^\d{1,15}$/.test(before) && Number(before) <= UNIX_MS_MAX ? Number(before) : null);

export class VisitHistoryService {
  constructor(
    private readonly store: Store,
    private readonly aliases: VisitorAliases,
  ) {}

  /** Another account's visitor is 404 exactly like a missing one. */
  async history(accountId: string, visitorId: string, before: string | undefined): Promise<VisitHistory> {
    const visitor = await this.aliases.survivor(accountId, visitorId);
    if (!visitor || visitor.visitCount + (visitor.mergedVisits ?? 0) === 0) throw new ApiError('visitor_not_found');
    const merged = await this.aliases.aliasesOf(visitor);
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
      if (!found) throw new ApiError('invalid_cursor', BAD_CURSOR);
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
    if (seq === null || seq > visitor.visitCount) throw new ApiError('invalid_cursor', BAD_CURSOR);
    const page = await this.visitPage(visitor, pageOf(seq));
    if (!page.some((v) => v.id === before)) throw new ApiError('invalid_cursor', BAD_CURSOR);
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

function visitView(v: StoredVisit, signalsJson: string): VisitView {
  return {
    id: v.id,
    timestamp: v.timestamp,
    country: v.country,
    city: v.city,
    region: v.region,
    asn: v.asn,
    asnOrg: v.asnOrg,
    asnCategory: v.asnCategory as VisitView['asnCategory'],
    botProbability: v.botProbability,
    confidence: v.confidence,
    riskFactors: v.riskFactors as VisitView['riskFactors'],
    signals: JSON.parse(signalsJson) as VisitView['signals'],
  };
}
