// The process's Prometheus metrics (prom-client), in a registry of their own
// (not prom-client's global one: a test process builds many apps). Modules
// record into the fields they are given; figures that already exist
// elsewhere (the visitor cache's hits, the launcher's restarts, the webhook
// queue in the database) are read when a scrape asks, so they cost nothing
// on the request path. Served by metrics/server.ts (METRICS_PORT); with
// WORKERS > 1 the primary sums the workers' registries (metrics/cluster.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LauncherStatus } from '../database.js';

export type IdentifyOutcome = 'returning' | 'first_visit' | 'sealed' | 'refused' | 'failed' | 'abandoned';

/** Why a request was turned away without being served (each a 429 or 503 a client may retry). */
export type Refusal = 'rate_limit' | 'monthly_quota' | 'body_budget' | 'database_unavailable';

/** Cumulative counts a module keeps as plain numbers (no prom-client on its path). */
export interface CacheCounts {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly size: number;
}

/** What only the database knows; read by one process of the instance per scrape. */
export interface QueueFigures {
  /** Webhook attempts queued (due now or later). */
  webhookQueue: number;
  /** Seconds the oldest due attempt has waited (0 when none is due). */
  webhookOldestDueSeconds: number;
  /** Visitor deletion jobs queued or running. */
  deletionsPending: number;
}

/** Figures read at scrape time; each is optional (a worker reports what it has). */
export interface MetricSources {
  visitorCache?: () => CacheCounts;
  queues?: () => Promise<QueueFigures>;
  launcher?: () => LauncherStatus;
}

// Identify answers in 2–30 ms on the dev database; the buckets resolve that and the tails.
const IDENTIFY_BUCKETS = [0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.5, 1, 2.5, 5];
const COMMAND_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 3];

/** A counter whose value is a cumulative figure read at scrape time. */
function readCounter(registry: Registry, name: string, help: string, read: () => number | undefined): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const value = read();
      this.reset();
      if (value !== undefined) this.inc(value);
    },
  });
}

export class Metrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};

  readonly identifyDuration = new Histogram<'outcome'>({
    name: 'deviceid_identify_duration_seconds',
    help: 'POST /v1/identify, from the request to the answer, by outcome: returning (a device seen before), first_visit, sealed (a sealed result, either), refused (4xx: key, allowlist, quota, validation), failed (5xx), abandoned (the client closed the connection before the answer; timed until then)',
    labelNames: ['outcome'],
    buckets: IDENTIFY_BUCKETS,
    registers: [this.registry],
  });

  readonly dbCommands = new Histogram<'command' | 'outcome'>({
    name: 'deviceid_db_command_duration_seconds',
    help: 'Database commands as the driver saw them (its command events), by command name and outcome (ok, error); the count is the number of commands',
    labelNames: ['command', 'outcome'],
    buckets: COMMAND_BUCKETS,
    registers: [this.registry],
  });

  readonly refusals = new Counter<'reason'>({
    name: 'deviceid_refusals_total',
    help: "Requests turned away before being served: rate_limit (429, the plan's requests per second), monthly_quota (429), body_budget (503, request bodies held at once over BODY_BUDGET_BYTES), database_unavailable (503)",
    labelNames: ['reason'],
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter<'result'>({
    name: 'deviceid_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered (2xx), failed (retried later), gave_up (failed after the 24-hour retry window)',
    labelNames: ['result'],
    registers: [this.registry],
  });

  readonly ruleDecisions = new Counter<'action'>({
    name: 'deviceid_rule_decisions_total',
    help: "Identifications judged by a project's ruleset, by the decision's action (events of projects without a ruleset are not counted)",
    labelNames: ['action'],
    registers: [this.registry],
  });

  readonly ruleHits = new Counter({
    name: 'deviceid_rule_hits_total',
    help: "Identifications decided by a rule (rather than by the ruleset's default action)",
    registers: [this.registry],
  });

  readonly ruleErrors = new Counter({
    name: 'deviceid_rule_errors_total',
    help: 'Rules that failed to evaluate on an identification (the rule is skipped; the dashboard names it)',
    registers: [this.registry],
  });

  constructor() {
    // Node's own: CPU, memory, heap, event loop lag, GC (summed or averaged over workers and the primary by prom-client's aggregators).
    collectDefaultMetrics({ register: this.registry });
    const cache = () => this.sources.visitorCache?.();
    readCounter(
      this.registry,
      'deviceid_visitor_cache_hits_total',
      'Device tokens identify found with their visitor in memory (no database read to name the visitor)',
      () => cache()?.hits,
    );
    readCounter(
      this.registry,
      'deviceid_visitor_cache_misses_total',
      'Device tokens identify looked up in memory and had to read from the database',
      () => cache()?.misses,
    );
    readCounter(
      this.registry,
      'deviceid_visitor_cache_evictions_total',
      'Visitors dropped from the cache to make room (VISITOR_CACHE_SIZE)',
      () => cache()?.evictions,
    );
    const sources = () => this.sources;
    new Gauge({
      name: 'deviceid_visitor_cache_entries',
      help: 'Visitors held in the visitor cache',
      registers: [this.registry],
      collect() {
        const c = sources().visitorCache?.();
        this.reset();
        if (c) this.set(c.size);
      },
    });
    readCounter(
      this.registry,
      'deviceid_database_launcher_restarts_total',
      'Restarts of the dev database launcher after it exited unexpectedly',
      () => this.sources.launcher?.().restarts,
    );
    new Gauge({
      name: 'deviceid_database_launcher_up',
      help: 'The dev database launcher is running (1) or restarting/stopped (0); absent with MONGODB_URI',
      registers: [this.registry],
      collect() {
        const status = sources().launcher?.();
        this.reset();
        if (status) this.set(status.state === 'running' ? 1 : 0);
      },
    });
    const queueGauges = [
      ['deviceid_webhook_queue_entries', 'Webhook delivery attempts queued, due now or later', 'webhookQueue'],
      ['deviceid_webhook_oldest_due_seconds', 'How long the oldest due webhook attempt has waited (0 when none is due)', 'webhookOldestDueSeconds'],
      ['deviceid_deletion_jobs_pending', 'Visitor deletion jobs queued or running', 'deletionsPending'],
    ] as const;
    // One read of the database per scrape serves all three (a scrape collects its metrics concurrently);
    // when the database does not answer they are left out of that scrape rather than failing it.
    let reading: Promise<QueueFigures | undefined> | null = null;
    const figures = () =>
      (reading ??= (sources().queues?.() ?? Promise.resolve(undefined)).catch(() => undefined).finally(() => setImmediate(() => (reading = null))));
    for (const [name, help, field] of queueGauges) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const f = await figures();
          this.reset();
          if (f) this.set(f[field]);
        },
      });
    }
  }

  /** Where scrape-time figures come from (a process adds what it has). */
  watch(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The store's `onCommandDone`: each database command's answer and time. */
  readonly command = (c: { name: string; seconds: number; ok: boolean }): void => {
    this.dbCommands.observe({ command: c.name, outcome: c.ok ? 'ok' : 'error' }, c.seconds);
  };

  /** This process's metrics as Prometheus text. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  identified(outcome: IdentifyOutcome, seconds: number): void {
    this.identifyDuration.observe({ outcome }, seconds);
  }
}
