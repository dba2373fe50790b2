// Periodic clean-up of documents whose expiry is checked on read: FerretDB
// has no TTL indexes, so expired sessions and attempt-limit slots are
// deleted here, as are events past their retention. Other modules add their
// own sweeps to the list. And the start-up maintenance: moving data an older
// version stored into today's layout.
import type { Logger } from 'pino';
import { HOURLY_MAX_HOURS } from '../contract/explorer.js';
import { PENDING_GRACE_MS } from './audit/log.js';
import type { Clock } from './clock.js';
import { MIN_AUDIT_RETENTION_DAYS } from './config.js';
import { grantSweep } from './deviceflow/service.js';
import { retentionSweep } from './retention.js';
import { CLAIM_MAX_AGE_MS } from './decisions/claims.js';
import { snapshotSweep } from './decisions/listCache.js';
import type { Store } from './store/index.js';
import { CHANGES_KEPT_MS } from './store/lists.js';
import { migrate } from './store/migrations.js';

/**
 * Moves data of an older layout (server/store/migrations.ts). Start-up runs
 * it once, before anything is served: the cluster's primary before it forks
 * its workers (WORKERS > 1), else the process before it listens. Serving
 * beside data not moved yet would let a deletion or the retention sweep miss
 * it (and the move bring it back afterwards), so a failure stops start-up;
 * the next start resumes the move.
 */
export async function startupMaintenance(store: Store, logger: Logger): Promise<void> {
  const moved = await migrate(store);
  if (moved.eventIndex) logger.info({ entries: moved.eventIndex }, 'moved the search and outbox entries of eventIndex into events');
  if (moved.owners) logger.info({ owners: moved.owners }, 'made the user of each single-user account its owner');
}

export const SWEEP_INTERVAL_MS = 10 * 60_000;

export type Sweep = (now: Date) => Promise<number>;

export function defaultSweeps(store: Store, retentionDays: number, auditRetentionDays = MIN_AUDIT_RETENTION_DAYS): Record<string, Sweep> {
  return {
    retention: retentionSweep(store, retentionDays),
    audit: (now) => store.audit.deleteBefore(new Date(now.getTime() - auditRetentionDays * 24 * 3600_000)),
    // Entries whose change's process died before confirming them: settled by what their documents say (server/store/audit.ts).
    auditPending: (now) => store.audit.settlePending(new Date(now.getTime() - PENDING_GRACE_MS)),
    sessions: (now) => store.sessions.deleteExpired(now),
    attemptSlots: (now) => store.attempts.deleteExpired(now),
    deviceGrants: grantSweep(store),
    // Per-second leases (WORKERS > 1) matter only during their second.
    rateLeases: (now) => store.rate.sweep(new Date(now.getTime() - 60_000)),
    // The dashboard shows a day of first-party proxy traffic.
    proxyStats: (now) => store.proxyStats.sweep(now),
    // The hourly counts of the longest window GET /api/projects/:projectId/hourly serves.
    hourlyCounts: (now) => store.usage.sweepHours(now.getTime() - HOURLY_MAX_HOURS * 3_600_000),
    // Loads replay change records from within this only, less a margin (server/decisions/listCache.ts).
    listChanges: (now) => store.lists.sweepChanges(now.getTime() - CHANGES_KEPT_MS),
    // What a cache's first load of a big list reads instead of its entries, rebuilt from them daily (server/decisions/listCache.ts).
    listSnapshots: snapshotSweep(store),
    // A claim outlives the longest maxAge a protected request may give, no more.
    claims: (now) => store.claims.deleteBefore(new Date(now.getTime() - CLAIM_MAX_AGE_MS)),
  };
}

/** Runs every sweep once; failures are logged and do not stop the others. */
export async function runSweeps(sweeps: Record<string, Sweep>, clock: Clock, logger: Logger): Promise<void> {
  const now = new Date(clock.now());
  for (const [name, sweep] of Object.entries(sweeps)) {
    try {
      const deleted = await sweep(now);
      if (deleted) logger.debug({ sweep: name, deleted }, 'swept expired documents');
    } catch (err) {
      logger.warn({ err, sweep: name }, 'sweep failed');
    }
  }
}

/** Starts the periodic sweeps; the returned function stops them. */
export function startSweeps(sweeps: Record<string, Sweep>, clock: Clock, logger: Logger): () => void {
  const timer = setInterval(() => void runSweeps(sweeps, clock, logger), SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
