// Stored events for the benchmarks: copies of one real event with its
// search entries, each with its own requestId (now) and visitor, written
// straight to the database (bench/http.ts --stored-events, bench/preview.ts).
import { monotonicFactory, ulid } from 'ulid';
import { entryIdsOf } from '../../server/store/eventIndex.js';
import type { BenchService } from './service.js';

/** `n` copies of the event `requestId`, in batches of 500. */
export async function seedEvents(service: BenchService, requestId: string, n: number): Promise<void> {
  const events = service.store.db.collection<{ _id: string; r?: string; v?: string; visitorId?: string }>('events');
  const u = requestId.slice(4);
  const event = (await events.findOne({ _id: requestId }))!;
  const entries = await events.find({ _id: { $in: entryIdsOf((await service.store.events.get(requestId))!) } }).toArray();
  const next = monotonicFactory();
  for (let done = 0; done < n;) {
    const batch = Math.min(500, n - done);
    const docs = Array.from({ length: batch }, () => {
      const v = next();
      const visitorId = `iq_${ulid()}`;
      return [
        { ...event, _id: `req_${v}`, visitorId },
        ...entries.map((e) => ({ ...e, _id: e._id.replace(`|v|${event.visitorId}|`, `|v|${visitorId}|`).replace(u, v), r: `req_${v}`, v: visitorId })),
      ];
    }).flat();
    await events.insertMany(docs, { ordered: false });
    done += batch;
  }
}
