// DELETE /v1/visitors/:visitorId: a privacy request. The request queues a
// durable job (server/store/deletions.ts) and answers 202 with its id; the
// job runs at once in this process, and any process resumes unfinished jobs
// at start and with the periodic sweeps. The job, step by step (each
// idempotent, recorded when done):
//  1. record the device's visitors: the survivor and every visitor merged
//     into it, with their visit counts;
//  2. hide them: their documents leave the account, so no read and no
//     identification finds them any more;
//  3. scrub the identity index: the device's tokens and merge claims go,
//     and its visitors leave every candidate list (so the device, when it
//     comes back, is a new visitor with no link to the old one); a list
//     left empty goes, so no linkedId's hash outlives its visitors;
//  4. delete their events with their search entries, and what webhooks
//     still hold of them (pending deliveries, the delivery log);
//  5. delete their visit pages and visitor documents;
//  6. delete events identified while the job ran (a second pass of step 4).
import type { AuditLog } from '../audit/log.js';
import { ulid } from '../ids.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { DeletionDoc, DeletionStatus } from '../store/deletions.js';
import type { ExpiringEvent } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { VisitorAliases } from '../visitors/aliases.js';

export interface DeletionView {
  deletionId: string;
  visitorId: string;
  status: DeletionStatus;
}

/** Called with the requestIds of deleted events (webhooks forget their deliveries). */
export type EventsDeleted = (accountId: string, requestIds: string[]) => Promise<void>;

const STEPS = ['hide', 'identity', 'events', 'visitors', 'stragglers'] as const;
type Step = (typeof STEPS)[number];

export class DeletionService {
  private readonly running = new Map<string, Promise<void>>();
  /** Tests: throw after this step, as a crash would stop the job there. */
  crashAfter: Step | null = null;
  /** Tests: queue jobs without running them. */
  paused = false;

  constructor(
    private readonly store: Store,
    private readonly aliases: VisitorAliases,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    /** Forgets the deleted events elsewhere (webhook deliveries). */
    private readonly onEventsDeleted: EventsDeleted = async () => {},
  ) {}

  async request(accountId: string, visitorId: string): Promise<DeletionView> {
    const existing = await this.store.deletions.get(accountId, visitorId);
    if (existing) return this.view(existing);
    const survivor = await this.aliases.survivor(accountId, visitorId);
    if (!survivor) throw new ApiError('visitor_not_found');
    const job: DeletionDoc = {
      _id: `${accountId}|${survivor._id}`,
      id: `del_${ulid(this.clock.now())}`,
      accountId,
      visitorId: survivor._id,
      status: 'queued',
      done: [],
      createdAt: new Date(this.clock.now()),
      finishedAt: null,
    };
    // Named by the deletion's id only: once done, nothing in the database names the visitor.
    const claimed = await this.audit.change(accountId, 'visitor.delete', { target: { type: 'deletion', id: job.id } }, (stamp) =>
      this.store.deletions.claim(job, stamp),
    );
    if (!claimed) {
      const other = await this.store.deletions.byKey(job._id);
      if (!other) throw new Error(`deletion ${job._id} vanished after a duplicate-key error`);
      return this.view(other);
    }
    if (visitorId !== survivor._id) await this.store.deletions.point(job, [visitorId]);
    if (!this.paused) void this.run(job._id).catch(() => undefined);
    return this.view(job);
  }

  private async view(doc: DeletionDoc): Promise<DeletionView> {
    const job = doc.pointer ? ((await this.store.deletions.byKey(doc.pointer)) ?? doc) : doc;
    return { deletionId: job.id, visitorId: job.visitorId, status: job.status };
  }

  /** Runs every unfinished job (at start-up, and with the sweeps); the number run. */
  async resume(): Promise<number> {
    const jobs = await this.store.deletions.unfinished();
    for (const j of jobs) await this.run(j._id);
    return jobs.length;
  }

  /** Waits for the jobs this process is running. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  /** Runs one job to its end; one run per job at a time in this process. */
  run(key: string): Promise<void> {
    const current = this.running.get(key);
    if (current) return current;
    const p = this.execute(key).finally(() => this.running.delete(key));
    this.running.set(key, p);
    return p;
  }

  private async execute(key: string): Promise<void> {
    let job = await this.store.deletions.byKey(key);
    if (!job || job.status === 'done') return;
    const d = this.store.deletions;
    if (job.status === 'queued') await d.set(key, { status: 'running' });
    if (!job.visitors) {
      const survivor = await this.store.visitors.get(job.visitorId);
      const aliases = survivor && survivor.accountId === job.accountId ? await this.aliases.aliasesOf(survivor) : [];
      const visitors = [...(survivor ? [survivor] : []), ...aliases].map((v) => ({ id: v._id, visits: v.visitCount }));
      await d.set(key, { visitors });
      await d.point(
        job,
        visitors.map((v) => v.id),
      );
      job = { ...job, visitors };
    }
    const visitors = job.visitors!;
    const ids = visitors.map((v) => v.id);
    const done = new Set(job.done ?? []);
    for (const step of STEPS) {
      if (done.has(step)) continue;
      if (step === 'hide') await d.hideVisitors(job.accountId, ids);
      if (step === 'identity') await d.scrubIdentity(job.accountId, new Set(ids));
      if (step === 'events' || step === 'stragglers') for (const v of visitors) await this.deleteEvents(job.accountId, v.id, v.visits);
      if (step === 'visitors') {
        for (const v of visitors) await d.deleteVisitPages(v.id, v.visits);
        await d.deleteVisitors(ids);
      }
      await d.stepDone(key, step);
      if (this.crashAfter === step) throw new Error(`crash after ${step} (test)`);
    }
    await d.set(key, { status: 'done', finishedAt: new Date(this.clock.now()) });
  }

  /** The visitor's events: those its search entries and its visit pages name, with their entries. */
  private async deleteEvents(accountId: string, visitorId: string, visits: number): Promise<void> {
    const d = this.store.deletions;
    const fromPages = await d.requestIdsInPages(visitorId, visits);
    await this.deleteRequests(accountId, fromPages);
    for (;;) {
      const entries = await d.visitorEntries(accountId, visitorId);
      if (!entries.length) return;
      await this.deleteRequests(
        accountId,
        entries.map((e) => e.r),
      );
      // Entries of events already gone (or never stored) go by their ids.
      await d.deleteEntries(entries.map((e) => e._id));
    }
  }

  private async deleteRequests(accountId: string, requestIds: string[]): Promise<void> {
    if (!requestIds.length) return;
    const docs = await Promise.all([...new Set(requestIds)].map((id) => this.store.events.get(id)));
    const events: ExpiringEvent[] = docs.filter((e) => e !== null && e.accountId === accountId) as ExpiringEvent[];
    await this.onEventsDeleted(
      accountId,
      events.map((e) => e._id),
    );
    await this.store.events.delete(events);
  }
}
