// Webhooks: endpoints per project (dashboard API) and delivery of every
// identification event to them, at least once, without adding latency to
// identify:
//  1. identify writes an outbox entry (`~o|<requestId>`) in the same
//     insertMany as the event's search entries, only while its project has
//     endpoints (a count on the project document identify already reads);
//  2. once the event is stored, this process fans it out at once, in the
//     background: one delivery per endpoint (a unique insert) and a queue
//     entry due now, then the outbox entry goes. Outbox entries a crash left
//     behind are fanned out by `recover` (at start and every 30 s);
//  3. `tick` makes the due attempts: claim (unique insert per attempt and
//     lease window), POST the full event signed with the endpoint's secret,
//     then record the outcome; a failure schedules the next attempt with
//     exponential back-off (30 s doubling up to 2 h) until 24 hours have
//     passed. The queue entry of an attempt goes only after its outcome is
//     recorded, so a crash in the middle loses nothing: the entry is still
//     due, and the claim of the dead process expires with its lease window.
import type { AuditLog } from '../audit/log.js';
import type { Metrics } from '../metrics/registry.js';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { ulid } from '../ids.js';
import { WEBHOOK_LIMITS } from '../../contract/webhooks.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { EventsService } from '../events/service.js';
import type { SecretBox } from '../sealing/secretBox.js';
import { outboxId, type OutboxEntry } from '../store/eventIndex.js';
import type { EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { ProjectDoc } from '../store/projects.js';
import type { DeliveryDoc, EndpointDoc } from '../store/webhooks.js';
import { requestIdBound } from '../retention.js';
import { checkEndpointUrl, guardedLookup } from './ssrf.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

export const RETRY_WINDOW_MS = 24 * 3600_000;
export const LEASE_MS = 60_000;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Outbox entries older than this are fanned out by `recover` (younger ones are this process's or another's hot path). */
export const OUTBOX_GRACE_MS = 30_000;
export const DELIVERY_LOG_DAYS = 30;
const TICK_BATCH = 20;
const DAY_MS = 24 * 3600_000;

/** Wait before attempt n + 1 after n failed attempts: 30 s, 1 min, 2 min, … at most 2 h. */
export const backoffMs = (failed: number) => Math.min(30_000 * 2 ** (failed - 1), 2 * 3600_000);

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const endpointView = (e: EndpointDoc) => ({
  id: e._id,
  url: e.url,
  secretHint: e.secretHint,
  createdAt: e.createdAt.toISOString(),
  secretRotatedAt: e.secretRotatedAt.toISOString(),
});

const deliveryId = (endpointId: string, requestId: string) => `${endpointId}|${requestId}`;

/** An event's first delivery to an endpoint, due now. */
const newDelivery = (endpointId: string, accountId: string, requestId: string, now: number): DeliveryDoc => ({
  _id: deliveryId(endpointId, requestId),
  accountId,
  endpointId,
  requestId,
  status: 'pending',
  attempts: 0,
  since: now,
  nextAttemptAt: now,
  lastAttemptAt: null,
  lastStatus: null,
  lastError: null,
  deliveredAt: null,
  createdAt: now,
});

const deliveryView = (d: DeliveryDoc) => ({
  requestId: d.requestId,
  status: d.status,
  attempts: d.attempts,
  lastStatus: d.lastStatus,
  lastError: d.lastError,
  lastAttemptAt: iso(d.lastAttemptAt),
  nextAttemptAt: iso(d.nextAttemptAt),
  deliveredAt: iso(d.deliveredAt),
  createdAt: new Date(d.createdAt).toISOString(),
});

const outboxEntry = (event: EventDoc): OutboxEntry => ({ _id: outboxId(event._id), r: event._id, a: event.accountId, p: event.projectId });

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

interface Outcome {
  status: number | null;
  error: string | null;
}

export class WebhooksService {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly aborts = new Set<AbortController>();
  private stopped = false;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
    private readonly events: EventsService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly allowPrivate: boolean,
    private readonly audit: AuditLog,
    private readonly metrics?: Metrics,
  ) {}

  // ---- dashboard API ----

  private async project(accountId: string, projectId: string) {
    const project = await this.store.projects.ofAccount(accountId, projectId);
    if (!project) throw new ApiError('project_not_found');
    return project;
  }

  private async endpointOf(accountId: string, projectId: string, endpointId: string) {
    const e = await this.store.webhooks.endpoint(endpointId);
    if (!e || e.accountId !== accountId || e.projectId !== projectId) throw new ApiError('webhook_endpoint_not_found');
    return e;
  }

  /** The count identify reads on the project document. */
  private async recount(projectId: string) {
    await this.store.projects.setWebhookEndpoints(projectId, (await this.store.webhooks.endpointsOf(projectId)).length);
  }

  async list(accountId: string, projectId: string) {
    await this.project(accountId, projectId);
    return (await this.store.webhooks.endpointsOf(projectId)).map(endpointView);
  }

  async create(accountId: string, projectId: string, url: string) {
    await this.project(accountId, projectId);
    const checked = checkEndpointUrl(url, this.allowPrivate);
    if ((await this.store.webhooks.endpointsOf(projectId)).length >= WEBHOOK_LIMITS.endpointsPerProject) {
      throw new ApiError('limit_reached', `A project can have at most ${WEBHOOK_LIMITS.endpointsPerProject} webhook endpoints`);
    }
    const secret = newSecret();
    const now = new Date(this.clock.now());
    const doc: EndpointDoc = {
      _id: `whe_${ulid(now.getTime())}`,
      accountId,
      projectId,
      url: checked.toString(),
      secret: this.box.seal(secret),
      secretHint: secret.slice(-4),
      createdAt: now,
      secretRotatedAt: now,
    };
    await this.audit.change(accountId, 'webhook.create', { target: { type: 'webhook', id: doc._id }, after: { projectId, url: doc.url } }, async (stamp) => {
      await this.store.webhooks.insertEndpoint(doc, stamp);
      await this.recount(projectId);
    });
    return { endpoint: endpointView(doc), secret };
  }

  async rotate(accountId: string, projectId: string, endpointId: string) {
    const e = await this.endpointOf(accountId, projectId, endpointId);
    const secret = newSecret();
    const at = new Date(this.clock.now());
    await this.audit.change(accountId, 'webhook.rotate_secret', { target: { type: 'webhook', id: e._id }, after: { projectId, url: e.url } }, (stamp) =>
      this.store.webhooks.setSecret(e._id, this.box.seal(secret), secret.slice(-4), at, stamp),
    );
    return { endpoint: endpointView({ ...e, secretHint: secret.slice(-4), secretRotatedAt: at }), secret };
  }

  async remove(accountId: string, projectId: string, endpointId: string) {
    const e = await this.endpointOf(accountId, projectId, endpointId);
    await this.audit.change(accountId, 'webhook.delete', { target: { type: 'webhook', id: e._id }, before: { projectId, url: e.url } }, async (stamp) => {
      await this.store.webhooks.deleteEndpoint(e._id, stamp);
      await this.recount(projectId);
    });
    return { endpoint: endpointView(e) };
  }

  async deliveries(accountId: string, projectId: string, endpointId: string) {
    const e = await this.endpointOf(accountId, projectId, endpointId);
    return (await this.store.webhooks.deliveriesOf(e._id, WEBHOOK_LIMITS.logSize)).map(deliveryView);
  }

  async redeliver(accountId: string, projectId: string, endpointId: string, requestId: string) {
    const e = await this.endpointOf(accountId, projectId, endpointId);
    const d = await this.store.webhooks.delivery(deliveryId(e._id, requestId));
    if (!d) throw new ApiError('delivery_not_found');
    const now = this.clock.now();
    const set = { status: 'pending' as const, since: now, nextAttemptAt: now };
    await this.store.webhooks.updateDelivery(d._id, set);
    await this.store.webhooks.enqueue(now, d._id);
    this.kick();
    return deliveryView({ ...d, ...set });
  }

  /**
   * The event changed after it was delivered (an analyst labeled it): every
   * endpoint of its project receives it again, as it is now, with the same
   * retries as a first delivery.
   */
  async resend(accountId: string, projectId: string, requestId: string): Promise<void> {
    const now = this.clock.now();
    for (const endpoint of await this.store.webhooks.endpointsOf(projectId)) {
      const _id = deliveryId(endpoint._id, requestId);
      // A delivery made before is due again now, as redeliver makes it.
      if (!(await this.store.webhooks.createDelivery(newDelivery(endpoint._id, accountId, requestId, now))))
        await this.store.webhooks.updateDelivery(_id, { status: 'pending', since: now, nextAttemptAt: now });
      await this.store.webhooks.enqueue(now, _id);
    }
    this.kick();
  }

  // ---- identify hooks ----

  /** The outbox entry written with the event, when its project has endpoints. */
  outboxFor(project: ProjectDoc | null, event: EventDoc): OutboxEntry[] {
    return project?.webhookEndpoints ? [outboxEntry(event)] : [];
  }

  /** After identify stored the event: fan it out and deliver, in the background. */
  stored(project: ProjectDoc | null, event: EventDoc): void {
    if (!project?.webhookEndpoints || this.stopped) return;
    this.track(this.fanOut(outboxEntry(event)).then(() => this.tick()));
  }

  // ---- delivery ----

  /** One delivery per endpoint of the project, each due now; then the outbox entry goes. Idempotent. */
  async fanOut(entry: OutboxEntry): Promise<void> {
    const now = this.clock.now();
    for (const endpoint of await this.store.webhooks.endpointsOf(entry.p)) {
      const _id = deliveryId(endpoint._id, entry.r);
      if (await this.store.webhooks.createDelivery(newDelivery(endpoint._id, entry.a, entry.r, now))) {
        await this.store.webhooks.enqueue(now, _id);
        continue;
      }
      // A delivery a crash left without its first queue entry gets it now (at its own time, which makes it due).
      const existing = await this.store.webhooks.delivery(_id);
      if (existing?.attempts === 0 && existing.nextAttemptAt !== null) await this.store.webhooks.enqueue(existing.nextAttemptAt, _id);
    }
    await this.store.eventIndex.deleteOutbox([entry.r]);
  }

  /** Fans out outbox entries older than OUTBOX_GRACE_MS (left by a crash between identify and fan-out). */
  async recover(): Promise<number> {
    const entries = await this.store.eventIndex.outbox(requestIdBound(this.clock.now() - OUTBOX_GRACE_MS), 100);
    for (const e of entries) await this.fanOut(e);
    return entries.length;
  }

  /** Makes the attempts due now; the number made. */
  async tick(): Promise<number> {
    if (this.stopped) return 0;
    const now = this.clock.now();
    const due = await this.store.webhooks.due(now, TICK_BATCH);
    const made = await Promise.all(due.map((q) => this.attempt(q._id, q.d, q.at, now)));
    return made.filter(Boolean).length;
  }

  private kick(): void {
    if (!this.stopped) this.track(this.tick());
  }

  private async attempt(queueEntry: string, deliveryId: string, dueAt: number, now: number): Promise<boolean> {
    const hooks = this.store.webhooks;
    const d = await hooks.delivery(deliveryId);
    // An entry is obsolete once its delivery is done or rescheduled: a tick
    // that read the queue while another process made this attempt must not
    // make the next one before its back-off.
    if (!d || d.status !== 'pending' || d.nextAttemptAt !== dueAt) {
      await hooks.dequeue(queueEntry);
      return false;
    }
    if (!(await hooks.claim(`${d._id}#${d.attempts}@${Math.floor(now / LEASE_MS)}`, now))) return false;

    const endpoint = await hooks.endpoint(d.endpointId);
    let body: string | null = null;
    try {
      body = JSON.stringify(await this.events.get(d.accountId, d.requestId));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    if (!endpoint || body === null) {
      // updateOne of a delivery removed with its endpoint or event matches nothing: fine.
      await hooks.updateDelivery(d._id, {
        status: 'failed',
        nextAttemptAt: null,
        lastError: endpoint ? 'The event no longer exists' : 'The endpoint was removed',
      });
      await hooks.dequeue(queueEntry);
      return false;
    }

    const outcome = await this.send(endpoint, d, body, now);
    if (this.stopped) return false; // a process going away records nothing more: the queue entry stays due
    const attempts = d.attempts + 1;
    const at = this.clock.now();
    if (outcome.status !== null && outcome.status >= 200 && outcome.status < 300) {
      await hooks.updateDelivery(d._id, {
        status: 'delivered',
        attempts,
        lastAttemptAt: at,
        lastStatus: outcome.status,
        lastError: null,
        deliveredAt: at,
        nextAttemptAt: null,
      });
      this.metrics?.webhookDeliveries.inc({ result: 'delivered' });
    } else {
      const next = at + backoffMs(attempts);
      const giveUp = next - d.since > RETRY_WINDOW_MS;
      // The next queue entry exists before the current one goes: a crash in between repeats an attempt, never loses one.
      if (!giveUp) await hooks.enqueue(next, d._id);
      await hooks.updateDelivery(d._id, {
        status: giveUp ? 'failed' : 'pending',
        attempts,
        lastAttemptAt: at,
        lastStatus: outcome.status,
        lastError: outcome.error,
        nextAttemptAt: giveUp ? null : next,
      });
      this.metrics?.webhookDeliveries.inc({ result: giveUp ? 'gave_up' : 'failed' });
    }
    await hooks.dequeue(queueEntry);
    return true;
  }

  /** POSTs the body, signed; never follows redirects. */
  private send(endpoint: EndpointDoc, d: DeliveryDoc, body: string, now: number): Promise<Outcome> {
    let url: URL;
    try {
      url = checkEndpointUrl(endpoint.url, this.allowPrivate);
    } catch (err) {
      return Promise.resolve({ status: null, error: err instanceof ApiError ? err.message : 'Invalid URL' });
    }
    const secret = this.box.open(endpoint.secret).toString('utf8');
    const abort = new AbortController();
    this.aborts.add(abort);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'deviceid-webhooks/1',
      [SIGNATURE_HEADER]: signatureHeader(secret, body, Math.floor(now / 1000)),
      'deviceid-event': 'identification',
      'deviceid-delivery': d.requestId,
      'deviceid-attempt': String(d.attempts + 1),
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Outcome>((resolve) => {
      const req = request(
        url,
        { method: 'POST', headers, lookup: guardedLookup(this.allowPrivate), signal: abort.signal, timeout: ATTEMPT_TIMEOUT_MS },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            resolve({
              status,
              error: status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? `Redirect (${status}) not followed` : `HTTP ${status}`,
            });
          });
          res.on('error', (err) => resolve({ status: res.statusCode ?? null, error: err.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`No answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`)));
      req.on('error', (err: NodeJS.ErrnoException) =>
        resolve({ status: null, error: err.code === 'EPRIVATE' ? err.message : err.code ? `${err.code}: ${err.message}` : err.message }),
      );
      req.end(body);
    }).finally(() => this.aborts.delete(abort));
  }

  /** Forgets deleted events: their deliveries (and log) and outbox entries. */
  async forgetEvents(accountId: string, requestIds: string[]): Promise<void> {
    if (!requestIds.length) return;
    const endpoints = await this.store.webhooks.endpointsOfAccount(accountId);
    await this.store.webhooks.deleteDeliveries(endpoints.flatMap((e) => requestIds.map((r) => `${e._id}|${r}`)));
    await this.store.eventIndex.deleteOutbox(requestIds);
  }

  /** Periodic clean-up: expired claims, and deliveries past the log's 30 days. */
  async sweep(now: Date): Promise<number> {
    const t = now.getTime();
    return (await this.store.webhooks.deleteClaimsBefore(t - DAY_MS)) + (await this.store.webhooks.deleteFinishedBefore(t - DELIVERY_LOG_DAYS * DAY_MS));
  }

  // ---- lifecycle ----

  private track<T>(p: Promise<T>): void {
    const tracked = p.catch((err: unknown) => this.logger.warn({ err }, 'webhook delivery failed'));
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }

  /** Resolves when this process's background deliveries have settled (tests). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /** Polls the queue every second and the outbox every 30 s. */
  start(): void {
    this.track(this.recover().then(() => this.tick()));
    const every = (ms: number, fn: () => Promise<unknown>) => {
      const t = setInterval(() => this.track(fn()), ms);
      t.unref();
      this.timers.push(t);
    };
    every(1_000, () => this.tick());
    every(OUTBOX_GRACE_MS, () => this.recover());
  }

  /** Stops polling and abandons attempts in flight without recording them (as a process that goes away does). */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    for (const a of this.aborts) a.abort();
  }
}
