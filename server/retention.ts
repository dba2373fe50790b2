// Event retention (RETENTION_DAYS): the periodic sweep deletes identification
// events older than the retention period, and the visits that summarise
// them. Events are found by a range on `_id` (ULIDs sort by time), in
// batches; a visit is removed from its page before its event is deleted, so
// the visit history never lists a visit whose event is gone. Visitors
// themselves (and their visit counts) are kept.
import { encodeTime } from 'ulid';
import type { Store } from './store/index.js';
import { pageOf } from './store/visits.js';

const DAY_MS = 24 * 3600_000;
/**
 * The sweep runs with the others every few minutes but does its work at most
 * hourly: old events leave in batches, and an hour's are few.
 */
export const RETENTION_INTERVAL_MS = 3600_000;

/** The smallest requestId of an event at `time` (ms): every older event's id sorts below it. */
export const requestIdBound = (time: number) => `req_${encodeTime(time, 10)}`;

export function retentionSweep(store: Store, retentionDays: number, batch = 500) {
  let lastRun = -Infinity;
  return async (now: Date): Promise<number> => {
    if (now.getTime() - lastRun < RETENTION_INTERVAL_MS) return 0;
    lastRun = now.getTime();
    const cutoff = now.getTime() - retentionDays * DAY_MS;
    let deleted = 0;
    for (;;) {
      const events = await store.events.olderThan(requestIdBound(cutoff), batch);
      const pages = new Map(events.map((e) => [`${e.visitorId}:${pageOf(e.visitSeq)}`, e]));
      for (const e of pages.values()) await store.visits.dropOlderThan(e.visitorId, pageOf(e.visitSeq), cutoff);
      // The newest page is held by the visitor document itself.
      for (const visitorId of new Set(events.map((e) => e.visitorId))) await store.visitors.dropVisitsOlderThan(visitorId, cutoff);
      await store.events.delete(events);
      deleted += events.length;
      if (events.length < batch) return deleted;
    }
  };
}
