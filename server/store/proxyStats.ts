// What the dashboard shows of a project's first-party proxy (server/proxy/):
// identify calls per project and UTC hour, how many came through a proxy,
// and the last error a proxy met. Processes count in memory and add their
// counts here at most every few seconds ($inc; on FerretDB, whose updates
// are not atomic, two processes adding at the same moment can lose one of
// the additions: these are statistics, and nothing depends on them).
//
// `_id`s: `<projectId>|h|<hour start, Unix ms>` {t, identify, proxied} and
// `<projectId>|error` {code, message, at, source}. Hours older than two days
// are swept.
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';

export interface ProxyErrorDoc {
  code: string;
  message: string;
  at: Date;
  source: 'service' | 'proxy';
}

interface StatsDoc {
  _id: string;
  /** Hour documents: the hour's start (Unix ms) and its counts. */
  t?: number;
  identify?: number;
  proxied?: number;
  /** The error document. */
  error?: ProxyErrorDoc;
}

export interface HourCounts {
  identify: number;
  proxied: number;
}

const HOUR = 3_600_000;
/** Hour documents are kept this long (the dashboard reads the last 24 hours). */
export const PROXY_STATS_KEEP_MS = 48 * HOUR;

const hourId = (projectId: string, t: number) => `${projectId}|h|${t}`;
const errorId = (projectId: string) => `${projectId}|error`;

export class ProxyStatsRepo {
  private readonly col: Collection<StatsDoc>;

  constructor(db: Db) {
    this.col = db.collection('proxyStats');
  }

  /** Adds counts (per project, per hour start) and replaces the last errors, in one command. */
  async add(counts: Map<string, Map<number, HourCounts>>, errors: Map<string, ProxyErrorDoc>): Promise<void> {
    const ops: AnyBulkWriteOperation<StatsDoc>[] = [];
    for (const [projectId, hours] of counts) {
      for (const [t, c] of hours) {
        if (!c.identify && !c.proxied) continue;
        ops.push({
          updateOne: { filter: { _id: hourId(projectId, t) }, update: { $inc: { identify: c.identify, proxied: c.proxied }, $set: { t } }, upsert: true },
        });
      }
    }
    for (const [projectId, error] of errors) {
      ops.push({ replaceOne: { filter: { _id: errorId(projectId) }, replacement: { error }, upsert: true } });
    }
    if (ops.length) await this.col.bulkWrite(ops, { ordered: false });
  }

  /** The counts of the given hours (their start times) and the last error, in one read. */
  async read(projectId: string, hours: number[]): Promise<{ counts: HourCounts; error: ProxyErrorDoc | null }> {
    const ids = [...hours.map((t) => hourId(projectId, t)), errorId(projectId)];
    const docs = await this.col.find({ _id: { $in: ids } }).toArray();
    const counts = { identify: 0, proxied: 0 };
    let error: ProxyErrorDoc | null = null;
    for (const d of docs) {
      if (d.error) error = d.error;
      counts.identify += d.identify ?? 0;
      counts.proxied += d.proxied ?? 0;
    }
    return { counts, error };
  }

  /** Deletes hour documents older than PROXY_STATS_KEEP_MS. */
  async sweep(now: Date): Promise<number> {
    const r = await this.col.deleteMany({ t: { $lt: now.getTime() - PROXY_STATS_KEEP_MS } });
    return r.deletedCount;
  }
}
