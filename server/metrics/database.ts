// The metrics only the database knows (webhook queue, deletion jobs), read
// when a scrape asks: by one process of an instance (worker slot 0), so that
// the instance's sum counts them once.
import type { Clock } from '../clock.js';
import type { Store } from '../store/index.js';
import type { QueueFigures } from './registry.js';

export function databaseFigures(store: Store, clock: Clock): () => Promise<QueueFigures> {
  return async () => {
    const [queue, deletionsPending] = await Promise.all([store.webhooks.queueFigures(), store.deletions.pendingCount()]);
    const now = clock.now();
    const waited = queue.oldestDueAt === null ? 0 : Math.max(0, now - queue.oldestDueAt) / 1000;
    return { webhookQueue: queue.entries, webhookOldestDueSeconds: waited, deletionsPending };
  };
}
