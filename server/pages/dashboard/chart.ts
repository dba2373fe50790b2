// The month's daily identify calls as an SVG bar chart (live keys, test keys
// stacked apart), built with createElementNS: nothing is parsed as markup.
import { daysInPeriod } from '../../metering/period.js';
import { calls, fmt, LOCALE, type Usage } from './types.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(parent: Element | null, tag: K, attrs: Record<string, string | number>, content?: string) {
  const n = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (content !== undefined) n.textContent = content;
  parent?.append(n);
  return n;
}

export function monthName(period: string): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1, 1)).toLocaleString(LOCALE, { month: 'long', year: 'numeric', timeZone: 'UTC' });
}

/** 12.3%, and small shares with two significant digits (0.0012%) so that any use shows. */
export function percent(count: number, limit: number): string {
  const share = limit > 0 ? count / limit : 0;
  const digits = share > 0 && share < 0.01 ? { maximumSignificantDigits: 2 } : { maximumFractionDigits: 1 };
  return share.toLocaleString(LOCALE, { style: 'percent', ...digits });
}

/** 1, 2, 5, 10, 20, 50, … at or above n: round axis ends. */
function niceCeil(n: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(n));
  return ([1, 2, 5, 10].find((f) => f * magnitude >= n) ?? 10) * magnitude;
}

/** Daily bars of the month (future days empty), titled and described for screen readers. */
export function usageChart(usage: Usage): SVGSVGElement {
  const { period, days, count, limit } = usage;
  const [width, height, left, right, top, bottom] = [640, 200, 44, 8, 18, 26];
  const slots = daysInPeriod(period);
  const busiest = days.reduce((a, d) => (d.count > a.count ? d : a), { date: '', count: 0, test: 0 });
  const max = niceCeil(Math.max(1, ...days.map((d) => d.count + d.test)));
  const slot = (width - left - right) / slots;
  const y = (v: number) => top + (height - top - bottom) * (1 - v / max);

  const root = svg(null, 'svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart-svg', role: 'img', 'aria-labelledby': 'chart-title chart-desc' });
  svg(root, 'title', { id: 'chart-title' }, `Identify calls with live keys per day, ${monthName(period)} (UTC)`);
  const summary = busiest.count ? `Busiest day ${busiest.date} with ${calls(busiest.count)}.` : 'No calls yet.';
  svg(root, 'desc', { id: 'chart-desc' }, `${calls(count)} of a monthly quota of ${fmt(limit)}. ${summary}`);
  svg(root, 'text', { x: left, y: 11, class: 'axis' }, 'calls per day');
  // Legend: live keys (the quota) and test keys (apart, never counted).
  svg(root, 'rect', { x: width - right - 190, y: 3, width: 10, height: 10, class: 'legend-live' });
  svg(root, 'text', { x: width - right - 176, y: 12, class: 'axis' }, 'live keys');
  svg(root, 'rect', { x: width - right - 100, y: 3, width: 10, height: 10, class: 'legend-test' });
  svg(root, 'text', { x: width - right - 86, y: 12, class: 'axis' }, 'test keys');
  for (const v of [0, max / 2, max].filter(Number.isInteger)) {
    svg(root, 'line', { x1: left, x2: width - right, y1: y(v), y2: y(v), class: v === 0 ? 'base' : 'grid' });
    svg(root, 'text', { x: left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, fmt(v));
  }
  days.forEach((d, i) => {
    const x = left + i * slot + slot * 0.15;
    if (d.count > 0) {
      const bar = svg(root, 'rect', { x, y: y(d.count), width: slot * 0.7, height: y(0) - y(d.count), class: 'bar' });
      svg(bar, 'title', {}, `${d.date}: ${calls(d.count)} with live keys`);
    }
    if (d.test > 0) {
      // Stacked on the live bar, in its own colour.
      const bar = svg(root, 'rect', { x, y: y(d.count + d.test), width: slot * 0.7, height: y(d.count) - y(d.count + d.test), class: 'bar-test' });
      svg(bar, 'title', {}, `${d.date}: ${calls(d.test)} with test keys (not counted)`);
    }
  });
  // Days 1, 5, 10, … and the last one (without a 30 crowding a 31).
  for (let day = 1; day <= slots; day++) {
    if (day !== 1 && day !== slots && (day % 5 !== 0 || slots - day < 2)) continue;
    svg(root, 'text', { x: left + (day - 0.5) * slot, y: height - 8, class: 'axis', 'text-anchor': 'middle' }, String(day));
  }
  return root;
}

/** A small chart of 24 hourly counts (oldest first), titled for screen readers. */
export function hourBars(counts: readonly number[], title: string, id: string): SVGSVGElement {
  const [width, height, top] = [240, 60, 4];
  const max = Math.max(1, ...counts);
  const slot = width / counts.length;
  const root = svg(null, 'svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart-svg spark', role: 'img', 'aria-labelledby': `${id}-title` });
  svg(root, 'title', { id: `${id}-title` }, title);
  svg(root, 'line', { x1: 0, x2: width, y1: height - 0.5, y2: height - 0.5, class: 'base' });
  counts.forEach((n, i) => {
    if (n === 0) return;
    const h = ((height - top) * n) / max;
    svg(root, 'rect', { x: i * slot + slot * 0.15, y: height - h, width: slot * 0.7, height: h, class: 'bar' });
  });
  return root;
}
