// The Grafana dashboard in the repository (server/metrics/grafana-dashboard.json)
// parses, and asks only for metrics and labels the service exports; every
// metric of ours has a panel.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gatherWorkers } from '../../../server/metrics/cluster.js';
import { Metrics } from '../../../server/metrics/registry.js';

interface Panel {
  id: number;
  title: string;
  type: string;
  datasource: { type: string; uid: string };
  targets: { expr: string; refId: string; legendFormat: string }[];
}
const dashboard = JSON.parse(readFileSync(new URL('../../../server/metrics/grafana-dashboard.json', import.meta.url), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string }[] };
};

// Every metric an instance exports: a worker's, and the primary's own (workers answering).
const metrics = new Metrics();
gatherWorkers(metrics, () => []);
const exported = new Map(
  metrics.registry
    .getMetricsAsArray()
    .map((m) => [m.name, { type: (m as unknown as { type: string }).type, labels: (m as unknown as { labelNames: string[] }).labelNames }]),
);
const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;
const PROMQL_WORDS = new Set(['sum', 'by', 'rate', 'increase', 'histogram_quantile', 'max', 'le', 'outcome', 'command', 'reason', 'result', 'action']);

/** The metric a series name belongs to (a histogram's _bucket, _count and _sum are its own). */
function metricOf(series: string): string | undefined {
  if (exported.has(series)) return series;
  const base = series.replace(HISTOGRAM_SERIES, '');
  return exported.get(base)?.type === 'histogram' ? base : undefined;
}

const seriesIn = (expr: string) =>
  [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\b(?=\s*[{[)]|\s*$|\s*\/|\s*\*)/g)].map((m) => m[1]!).filter((w) => !PROMQL_WORDS.has(w));

describe('Grafana dashboard', () => {
  it('is a dashboard with a Prometheus data source variable that every panel uses', () => {
    expect(dashboard.uid).toBe('deviceid-overview');
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const p of dashboard.panels) {
      expect(p.title).not.toBe('');
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets.length).toBeGreaterThan(0);
    }
  });

  it('queries only metrics the service exports, grouped only by labels they have', () => {
    for (const p of dashboard.panels) {
      for (const t of p.targets) {
        const series = seriesIn(t.expr);
        expect(series.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        const names = series.map((s) => {
          const name = metricOf(s);
          expect(name, `${p.title}: ${s} is not exported`).toBeDefined();
          return name!;
        });
        const labels = new Set(names.flatMap((n) => exported.get(n)!.labels).concat('le'));
        for (const [, by] of t.expr.matchAll(/by \(([^)]*)\)/g)) {
          for (const label of by!.split(',').map((l) => l.trim())) expect(labels.has(label), `${p.title}: no label ${label}`).toBe(true);
        }
      }
    }
  });

  it('shows every deviceid metric', () => {
    const shown = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => seriesIn(t.expr).map(metricOf))));
    const ours = [...exported.keys()].filter((n) => n.startsWith('deviceid_'));
    expect(ours.filter((n) => !shown.has(n))).toEqual([]);
  });
});
