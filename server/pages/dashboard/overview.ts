// Overview: plan, quota and the month's usage (plan.ts), and the chosen
// project's last 24 hours: identifications, bots and suspects per hour as
// small charts, from the hourly counts identify keeps (exact, however many).
import { SUSPECT_SCORE_COUNTED } from '../../../contract/suspects.js';
import { api } from '../browser/client.js';
import { el, node, text } from '../browser/dom.js';
import { hourBars } from './chart.js';
import { planPanel } from './plan.js';
import { botCategoryLabel, type BotCategory } from './bots.js';
import { fmt, report, type Account, type Projects, type Usage } from './types.js';

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
    // The 24 hours ending with the current one, by the server's clock.
    const res = await api.explorer.getProjectHourly({ params: { projectId: project.id }, query: {} });
    if (mine !== generation) return;
    if (res.status !== 200) {
      text('day-status', '');
      return report('day-error', res);
    }
    const { hours, botCategories } = res.body;
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const figures = [
      ['identifications', 'Identifications', hours.map((h) => h.identifications)],
      ['bots', 'Bots (good or bad)', hours.map((h) => h.bots)],
      ['suspects', `Suspects (score ${SUSPECT_SCORE_COUNTED} or more, or flagged, when identified)`, hours.map((h) => h.suspects)],
    ] as const;
    el('day-charts').replaceChildren(
      ...figures.map(([id, label, counts]) => {
        const figure = node('figure', '', 'spark-figure');
        const caption = node('figcaption');
        caption.append(node('strong', fmt(sum(counts))), ` ${label}`);
        figure.append(caption, hourBars(counts, `${label} per hour, last 24 hours: ${counts.join(', ')}`, `spark-${id}`));
        return figure;
      }),
      botTable(botCategories),
    );
    text('day-status', 'Counted as identifications were served: deleting a visitor later does not take its identifications off.');
    el('day-empty').hidden = sum(figures[0][2]) > 0;
  };

  return { show: () => void load() };
}

/** The last 24 hours' bots by category, good (proven) and bad, most first (as the server orders them). */
function botTable(byCategory: { category: BotCategory; good: number; bad: number }[]): HTMLElement {
  const figure = node('figure', '', 'spark-figure');
  const caption = node('figcaption');
  caption.append(node('strong', 'Bots by category'));
  figure.append(caption);
  if (!byCategory.length) {
    figure.append(node('p', 'No bots in the last 24 hours.', 'sub-line'));
    return figure;
  }
  const table = node('table', '', 'compact');
  table.id = 'bot-categories';
  const head = node('tr');
  for (const h of ['Category', 'Good', 'Bad']) head.append(node('th', h));
  table.append(head);
  for (const n of byCategory) {
    const tr = node('tr');
    tr.append(node('td', botCategoryLabel(n.category)), node('td', fmt(n.good)), node('td', fmt(n.bad)));
    table.append(tr);
  }
  figure.append(table, node('p', 'Good: proven by its operator’s addresses or DNS, or signed. Bad: any other automation.', 'sub-line'));
  return figure;
}
