// Overview: plan, quota and the month's usage (plan.ts), and the chosen
// project's last 24 hours: identifications, bots and suspects per hour as
// small charts, from the explorer's event list.
import { api } from '../browser/client.js';
import { el, node, text } from '../browser/dom.js';
import { hourBars } from './chart.js';
import { planPanel } from './plan.js';
import { botCategoryLabel, type BotCategory } from './bots.js';
import { fmt, report, type Account, type Projects, type Usage } from './types.js';

const HOUR_MS = 3_600_000;
/** Pages of 100 events read at most: beyond 1,000 events the figures say "at least". */
const MAX_PAGES = 10;
/** From this suspect score on (or flagged by hand) an event counts as a suspect. */
const SUSPECT_SCORE = 50;

export function overviewView(initial: { account: Account; usage: Usage }, projects: Projects): { show(): void } {
  planPanel(initial);
  let generation = 0;

  const load = async () => {
    const mine = ++generation;
    const project = projects.current();
    text('day-project', project?.name ?? '');
    report('day-error', null);
    el('day-charts').replaceChildren();
    el('day-empty').hidden = true;
    if (!project) return;
    text('day-status', 'Loading…');
    // Hourly slots ending with the current hour.
    const end = Date.now();
    const start = Math.floor(end / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
    const slots = { all: new Array<number>(24).fill(0), bots: new Array<number>(24).fill(0), suspects: new Array<number>(24).fill(0) };
    const byCategory = new Map<BotCategory, { good: number; bad: number }>();
    let paginationKey: string | undefined;
    let pages = 0;
    do {
      const res = await api.explorer.listProjectEvents({
        params: { projectId: project.id },
        query: { start, limit: 100, ...(paginationKey ? { paginationKey } : {}) },
      });
      if (mine !== generation) return;
      if (res.status !== 200) {
        text('day-status', '');
        return report('day-error', res);
      }
      for (const e of res.body.events) {
        const slot = Math.min(23, Math.floor((e.timestamp - start) / HOUR_MS));
        slots.all[slot]!++;
        if (e.bot !== 'none') slots.bots[slot]!++;
        if (e.botInfo) {
          const row = byCategory.get(e.botInfo.category) ?? { good: 0, bad: 0 };
          row[e.bot === 'good' ? 'good' : 'bad']++;
          byCategory.set(e.botInfo.category, row);
        }
        if (e.suspect || e.suspectScore >= SUSPECT_SCORE) slots.suspects[slot]!++;
      }
      paginationKey = res.body.paginationKey;
    } while (paginationKey && ++pages < MAX_PAGES);
    const atLeast = paginationKey ? 'at least ' : '';
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const figures = [
      ['identifications', 'Identifications', slots.all],
      ['bots', 'Bots (good or bad)', slots.bots],
      ['suspects', `Suspects (score ${SUSPECT_SCORE} or more, or flagged)`, slots.suspects],
    ] as const;
    el('day-charts').replaceChildren(
      ...figures.map(([id, label, counts]) => {
        const figure = node('figure', '', 'spark-figure');
        const caption = node('figcaption');
        caption.append(node('strong', `${atLeast}${fmt(sum(counts))}`), ` ${label}`);
        figure.append(caption, hourBars(counts, `${label} per hour, last 24 hours: ${counts.join(', ')}`, `spark-${id}`));
        return figure;
      }),
      botTable(byCategory, atLeast),
    );
    text('day-status', atLeast ? `From the newest ${fmt(MAX_PAGES * 100)} events of the last 24 hours.` : '');
    el('day-empty').hidden = sum(slots.all) > 0;
  };

  return { show: () => void load() };
}

/** The last 24 hours' bots by category, good (proven) and bad, most first. */
function botTable(byCategory: Map<BotCategory, { good: number; bad: number }>, atLeast: string): HTMLElement {
  const figure = node('figure', '', 'spark-figure');
  const caption = node('figcaption');
  caption.append(node('strong', 'Bots by category'), atLeast ? ` (${atLeast.trim()})` : '');
  figure.append(caption);
  if (!byCategory.size) {
    figure.append(node('p', 'No bots in the last 24 hours.', 'sub-line'));
    return figure;
  }
  const table = node('table', '', 'compact');
  table.id = 'bot-categories';
  const head = node('tr');
  for (const h of ['Category', 'Good', 'Bad']) head.append(node('th', h));
  table.append(head);
  for (const [category, n] of [...byCategory].sort((a, b) => b[1].good + b[1].bad - (a[1].good + a[1].bad))) {
    const tr = node('tr');
    tr.append(node('td', botCategoryLabel(category)), node('td', fmt(n.good)), node('td', fmt(n.bad)));
    table.append(tr);
  }
  figure.append(table, node('p', 'Good: proven by its operator’s addresses or DNS, or signed. Bad: any other automation.', 'sub-line'));
  return figure;
}
