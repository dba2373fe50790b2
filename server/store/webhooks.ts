// Webhooks: endpoints per project, one delivery per (endpoint, event) with
// its log, and the queue of due attempts. All reads are by `_id` (point
// reads, or `_id` ranges: an endpoint's deliveries, the due queue), but the
// endpoint list of a project, a small collection read by `projectId`.
//
// - webhookEndpoints: `whe_<ulid>`; the signing secret encrypted (SecretBox).
// - webhookDeliveries: `<endpointId>|<requestId>`, created by a unique
//   insert, so a fan-out repeated after a crash creates nothing twice.
// - webhookQueue: `<dueAt, 13 digits>|<delivery>` → due attempts in time
//   order; rescheduling inserts the next entry before deleting the current.
// - webhookClaims: `<delivery>#<attempt>@<lease window>`, a unique insert:
//   of several processes polling the queue one makes an attempt; a process
//   that died holding a claim loses it with the window.
import type { Collection, Db } from 'mongodb';
import type { Stamp } from './audit.js';
import { insertUnique } from './errors.js';

export interface EndpointDoc {
  _id: string;
  accountId: string;
  projectId: string;
  url: string;
  /** Encrypted signing secret. */
  secret: string;
  /** Last 4 characters of the secret, to tell secrets apart. */
  secretHint: string;
  createdAt: Date;
  secretRotatedAt: Date;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryDoc {
  _id: string; // <endpointId>|<requestId>
  accountId: string;
  endpointId: string;
  requestId: string;
  status: DeliveryStatus;
  attempts: number;
  /** Start of the retry window (creation, or the last redeliver). */
  since: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  createdAt: number;
}

interface QueueDoc {
  _id: string;
  d: string;
  at: number;
}

interface ClaimDoc {
  _id: string;
  at: number;
}

export const queueId = (at: number, delivery: string) => `${String(at).padStart(13, '0')}|${delivery}`;

export class WebhooksRepo {
  private readonly endpoints: Collection<EndpointDoc>;
  private readonly deliveries: Collection<DeliveryDoc>;
  private readonly queue: Collection<QueueDoc>;
  private readonly claims: Collection<ClaimDoc>;

  constructor(db: Db) {
    this.endpoints = db.collection('webhookEndpoints');
    this.deliveries = db.collection('webhookDeliveries');
    this.queue = db.collection('webhookQueue');
    this.claims = db.collection('webhookClaims');
  }

  async ensureIndexes(): Promise<void> {
    await this.endpoints.createIndex({ projectId: 1 });
    await this.queue.createIndex({ d: 1 });
  }

  endpoint(id: string): Promise<EndpointDoc | null> {
    return this.endpoints.findOne({ _id: id });
  }

  endpointsOf(projectId: string): Promise<EndpointDoc[]> {
    return this.endpoints.find({ projectId }).sort({ _id: 1 }).toArray();
  }

  endpointsOfAccount(accountId: string): Promise<EndpointDoc[]> {
    return this.endpoints.find({ accountId }).toArray();
  }

  async insertEndpoint(doc: EndpointDoc, stamp?: Stamp): Promise<void> {
    await stamp?.intend(this.endpoints, doc._id);
    await this.endpoints.insertOne(stamp ? stamp.insert(doc) : doc);
    stamp?.landed();
  }

  async setSecret(id: string, secret: string, secretHint: string, at: Date, stamp?: Stamp): Promise<void> {
    const update = { $set: { secret, secretHint, secretRotatedAt: at } };
    await stamp?.intend(this.endpoints, id);
    if ((await this.endpoints.updateOne({ _id: id }, stamp ? stamp.update(update) : update)).matchedCount) stamp?.landed();
  }

  /** Removes the endpoint and its deliveries (an `_id` range). */
  async deleteEndpoint(id: string, stamp?: Stamp): Promise<void> {
    await stamp?.intend(this.endpoints, id, true);
    if ((await this.endpoints.deleteOne({ _id: id })).deletedCount) stamp?.landed();
    await this.deliveries.deleteMany({ _id: { $gt: `${id}|`, $lt: `${id}|~` } });
  }

  /** Creates the delivery unless it exists; true when this call created it. */
  createDelivery(doc: DeliveryDoc): Promise<boolean> {
    return insertUnique(this.deliveries, doc);
  }

  delivery(id: string): Promise<DeliveryDoc | null> {
    return this.deliveries.findOne({ _id: id });
  }

  async updateDelivery(id: string, set: Partial<DeliveryDoc>): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: set });
  }

  /** An endpoint's deliveries, newest first (requestIds sort by time). */
  deliveriesOf(endpointId: string, limit: number): Promise<DeliveryDoc[]> {
    return this.deliveries
      .find({ _id: { $gt: `${endpointId}|`, $lt: `${endpointId}|~` } })
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Deletes deliveries with every trace of them: their queue entries and
   * their claims (`<delivery>#…`, an `_id` range each), so that deleting a
   * visitor's events leaves no request id in webhook bookkeeping. A delivery
   * goes first: an attempt starting after that finds nothing to do.
   */
  async deleteDeliveries(ids: string[]): Promise<void> {
    if (!ids.length) return;
    await this.deliveries.bulkWrite(ids.map((_id) => ({ deleteOne: { filter: { _id } } })));
    await this.queue.deleteMany({ d: { $in: ids } });
    await this.claims.bulkWrite(ids.map((id) => ({ deleteMany: { filter: { _id: { $gt: `${id}#`, $lt: `${id}#~` } } } })));
  }

  /** Finished deliveries created before `before` (ms): the log keeps 30 days. */
  async deleteFinishedBefore(before: number): Promise<number> {
    return (await this.deliveries.deleteMany({ createdAt: { $lt: before }, status: { $ne: 'pending' } })).deletedCount;
  }

  async enqueue(at: number, delivery: string): Promise<void> {
    await insertUnique(this.queue, { _id: queueId(at, delivery), d: delivery, at });
  }

  /** Attempts due at `now`, oldest first. */
  due(now: number, limit: number): Promise<QueueDoc[]> {
    return this.queue
      .find({ _id: { $lt: `${String(now + 1).padStart(13, '0')}|` } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
  }

  /** Attempts queued, and when the oldest is due (null when the queue is empty): metrics. */
  async queueFigures(): Promise<{ entries: number; oldestDueAt: number | null }> {
    const [entries, oldest] = await Promise.all([
      this.queue.estimatedDocumentCount(),
      this.queue
        .find({}, { projection: { at: 1 } })
        .sort({ _id: 1 })
        .limit(1)
        .next(),
    ]);
    return { entries, oldestDueAt: oldest?.at ?? null };
  }

  async dequeue(id: string): Promise<void> {
    await this.queue.deleteOne({ _id: id });
  }

  claim(id: string, at: number): Promise<boolean> {
    return insertUnique(this.claims, { _id: id, at });
  }

  async deleteClaimsBefore(before: number): Promise<number> {
    return (await this.claims.deleteMany({ at: { $lt: before } })).deletedCount;
  }
}
