// WORKERS=N: one scrape gives the whole instance. The primary asks every
// worker for its registry over the cluster's IPC channel and merges them
// with its own (the launcher's figures) with prom-client's aggregation:
// counters and histograms summed, Node's own gauges summed or averaged as
// prom-client defines them. A worker that does not answer within
// WORKER_WAIT_MS is left out of that scrape (and counted as such).
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Metrics } from './registry.js';

const ASK = 'deviceid:metrics?';
const ANSWER = 'deviceid:metrics';
export const WORKER_WAIT_MS = 2_000;

type Json = MetricObjectWithValues<MetricValue<string>>[];
interface Ask {
  type: typeof ASK;
  id: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  metrics: Json;
}

const isAsk = (m: unknown): m is Ask => typeof m === 'object' && m !== null && (m as Ask).type === ASK;
const isAnswer = (m: unknown): m is Answer => typeof m === 'object' && m !== null && (m as Answer).type === ANSWER;

/** In a worker: answers the primary's requests with this process's metrics. */
export function answerPrimary(metrics: Metrics, channel: NodeJS.Process = process): void {
  channel.on('message', (m: unknown) => {
    if (!isAsk(m)) return;
    void metrics.registry.getMetricsAsJSON().then((json) => channel.send?.({ type: ANSWER, id: m.id, metrics: json } satisfies Answer));
  });
}

/** In the primary: a scrape of the whole instance. */
export function gatherWorkers(own: Metrics, workers: () => Iterable<Worker>): () => Promise<{ text: string; contentType: string }> {
  let next = 0;
  const answered = new Gauge({ name: 'deviceid_metrics_workers_answered', help: 'Workers whose metrics this scrape includes', registers: [own.registry] });
  const silent = new Gauge({
    name: 'deviceid_metrics_workers_silent',
    help: `Workers that did not answer this scrape within ${WORKER_WAIT_MS} ms (their figures are missing from it)`,
    registers: [own.registry],
  });
  return async () => {
    const id = next++;
    const asked = [...workers()].filter((w) => w.isConnected());
    const answers = await Promise.all(asked.map((w) => askWorker(w, id)));
    const got = answers.filter((a): a is Json => a !== null);
    answered.set(got.length);
    silent.set(asked.length - got.length);
    const merged = AggregatorRegistry.aggregate([await own.registry.getMetricsAsJSON(), ...got]);
    return { text: await merged.metrics(), contentType: Registry.PROMETHEUS_CONTENT_TYPE };
  };
}

function askWorker(w: Worker, id: number): Promise<Json | null> {
  return new Promise((resolve) => {
    const done = (answer: Json | null) => {
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('exit', onExit);
      resolve(answer);
    };
    const onMessage = (m: unknown) => isAnswer(m) && m.id === id && done(m.metrics);
    const onExit = () => done(null);
    const timer = setTimeout(() => done(null), WORKER_WAIT_MS);
    w.on('message', onMessage);
    w.once('exit', onExit);
    w.send({ type: ASK, id } satisfies Ask);
  });
}
