// Review: the events the chosen project's rules sent to review, newest
// first (?status=pending, labeled or all in the address), with Load more.
// Analysts label one fraud or legitimate, with a note, and may put its
// visitor id, linkedId or IP on a list of that kind in the same step; they
// also export every label as JSON lines.
import { button, el, labelCells, node, text } from '../../browser/dom.js';
import type { Shared } from '../lazy.js';
import type { Route } from '../router.js';
import { report, utcSeconds } from '../types.js';
import { reaches } from '../views.js';
import { KIND_LABELS, msTime, type List, type ReviewItem } from './common.js';

const STATUSES = ['pending', 'labeled', 'all'] as const;
type Status = (typeof STATUSES)[number];
const FIELDS = [
  ['visitorId', 'visitor id'],
  ['linkedId', 'linkedId'],
  ['ip', 'IP'],
] as const;
type Field = (typeof FIELDS)[number][0];

export function reviewsView({ api, projects, nav, role }: Shared): { show(route: Route): void } {
  const calls = api.dashboardDecisions;
  const canLabel = reaches(role, 'analyst');
  let projectId = '';
  let status: Status = 'pending';
  let items: ReviewItem[] = [];
  let nextKey: string | undefined;
  let lists: List[] = [];
  let ruleNames = new Map<string, string>();
  /** The item whose label form is open. */
  let labeling: string | null = null;
  let generation = 0;

  const labelText = (item: ReviewItem) => {
    const td = node('td');
    const l = item.label;
    if (l) {
      td.append(node('span', l.verdict, l.verdict === 'fraud' ? 'badge warn' : 'badge good'));
      if (l.note) td.append(node('span', l.note, 'sub-line'));
      td.append(node('span', `by ${l.labeledBy}, ${utcSeconds(l.labeledAt)}`, 'sub-line'));
    } else td.append(node('span', 'pending', 'badge plain'));
    if (canLabel) {
      const open = button(
        l ? 'Change label' : 'Label',
        'btn small secondary',
        () => {
          labeling = labeling === item.requestId ? null : item.requestId;
          render();
          document.getElementById(`label-note-${item.requestId}`)?.focus();
        },
        `${l ? 'Change label of' : 'Label'} ${item.requestId}`,
      );
      open.setAttribute('aria-expanded', String(labeling === item.requestId));
      open.dataset.requestId = item.requestId;
      td.append(open);
    }
    return td;
  };

  const itemRow = (item: ReviewItem) => {
    const tr = node('tr');
    tr.dataset.requestId = item.requestId;
    const time = node('td', msTime(item.timestamp), 'nowrap');
    time.append(node('span', item.requestId, 'sub-line mono'));
    const who = node('td');
    const visitor = node('a', item.visitorId, 'mono');
    visitor.href = nav.href('visitor', {}, item.visitorId);
    visitor.setAttribute('aria-label', `Visitor ${item.visitorId}`);
    who.append(visitor);
    if (item.linkedId !== undefined) who.append(node('span', `linkedId ${item.linkedId}`, 'sub-line text'));
    const where = node('td');
    where.append(node('span', item.ip, 'mono'), node('span', item.country || 'unknown country', 'sub-line'));
    const rule = node('td', item.ruleId ? (ruleNames.get(item.ruleId) ?? item.ruleId) : '—', 'text');
    if (item.ruleId && ruleNames.has(item.ruleId)) rule.append(node('span', item.ruleId, 'sub-line mono'));
    tr.append(time, who, where, node('td', item.url || '—', 'text'), node('td', String(item.suspectScore)), rule, labelText(item));
    return tr;
  };

  /** The form under an item: a note, lists to add its values to, and the two verdicts. */
  const formRow = (item: ReviewItem) => {
    const tr = node('tr', '', 'label-row');
    const td = node('td');
    td.colSpan = 7;
    const form = node('form', '', 'label-form');
    form.noValidate = true;
    const noteLabel = node('label', 'Note (optional) ');
    const note = node('input');
    note.type = 'text';
    note.maxLength = 500;
    note.id = `label-note-${item.requestId}`;
    note.autocomplete = 'off';
    noteLabel.append(note);
    form.append(noteLabel);
    const selects: [Field, HTMLSelectElement][] = [];
    for (const [field, name] of FIELDS) {
      const fitting = lists.filter((l) => l.kind === field);
      if (!fitting.length || (field === 'linkedId' && item.linkedId === undefined)) continue;
      const label = node('label', `Add its ${name} to `);
      const select = node('select');
      select.dataset.field = field;
      select.append(Object.assign(node('option', 'no list'), { value: '' }), ...fitting.map((l) => Object.assign(node('option', l.name), { value: l.name })));
      label.append(select);
      form.append(label);
      selects.push([field, select]);
    }
    if (!selects.length)
      form.append(
        node('p', `No list of ${KIND_LABELS.visitorId}, ${KIND_LABELS.linkedId} or ${KIND_LABELS.ip} to add it to: create one on the Lists page.`, 'muted'),
      );
    const error = node('p', '', 'error');
    error.id = `label-error-${item.requestId}`;
    error.setAttribute('role', 'alert');
    error.hidden = true;
    const send = (verdict: 'fraud' | 'legitimate') => async () => {
      report(error.id, null);
      const addTo = selects.filter(([, s]) => s.value).map(([field, s]) => ({ list: s.value, field }));
      const res = await calls.labelEvent({
        params: { projectId, requestId: item.requestId },
        body: { verdict, ...(note.value.trim() && { note: note.value.trim() }), ...(addTo.length && { addTo }) },
      });
      if (res.status !== 200) return report(error.id, res);
      item.label = res.body;
      labeling = null;
      render();
      text('reviews-status', `Labeled ${item.requestId} ${verdict}${addTo.length ? `; added to ${addTo.map((a) => a.list).join(', ')}` : ''}.`);
      el('reviews-body').querySelector<HTMLButtonElement>(`button[data-request-id="${item.requestId}"]`)?.focus();
    };
    const row = node('div', '', 'row');
    row.append(
      button('Fraud', 'btn small danger', () => void send('fraud')(), `Label ${item.requestId} fraud`),
      ' ',
      button('Legitimate', 'btn small accent', () => void send('legitimate')(), `Label ${item.requestId} legitimate`),
      ' ',
      button('Cancel', 'btn small secondary', () => {
        labeling = null;
        render();
      }),
    );
    form.append(row, error);
    form.addEventListener('submit', (e) => e.preventDefault());
    td.append(form);
    tr.append(td);
    return tr;
  };

  const render = () => {
    const body = el<HTMLTableSectionElement>('reviews-body');
    body.replaceChildren(...items.flatMap((item) => (labeling === item.requestId ? [itemRow(item), formRow(item)] : [itemRow(item)])));
    labelCells(body);
    // The form's one cell is no column's.
    for (const td of Array.from(body.querySelectorAll<HTMLElement>('.label-row td'))) delete td.dataset.label;
    el('reviews-table').hidden = items.length === 0;
    el('reviews-empty').hidden = items.length > 0;
    text(
      'reviews-empty',
      status === 'pending'
        ? 'Nothing waits for review. A rule whose action is review sends its events here.'
        : status === 'labeled'
          ? 'No labeled events yet.'
          : 'No events were sent to review yet.',
    );
    el('reviews-more').hidden = !nextKey;
  };

  const load = async (more: boolean) => {
    const mine = more ? generation : ++generation;
    const alert = more ? 'reviews-more-error' : 'reviews-error';
    report(alert, null);
    const res = await calls.listReviews({ params: { projectId }, query: { status, ...(more && nextKey && { paginationKey: nextKey }) } });
    if (mine !== generation) return;
    if (res.status !== 200) return report(alert, res);
    items = more ? [...items, ...res.body.items] : res.body.items;
    nextKey = res.body.paginationKey;
    render();
  };

  /** The lists a label may add to, and the rules' names (the current version's). */
  const loadContext = async () => {
    const [l, r] = await Promise.all([calls.listLists({ params: { projectId } }), calls.getRuleset({ params: { projectId } })]);
    lists = l.status === 200 ? l.body.lists : [];
    ruleNames = new Map(r.status === 200 ? r.body.rules.map((x) => [x.id, x.name]) : []);
  };

  el('reviews-more').addEventListener('click', () => void load(true));

  return {
    show(route) {
      projectId = projects.current()?.id ?? '';
      const wanted = route.query.get('status');
      status = STATUSES.find((s) => s === wanted) ?? 'pending';
      for (const a of Array.from(document.querySelectorAll<HTMLAnchorElement>('#view-reviews .tabs a'))) {
        const s = a.dataset.status as Status;
        a.href = nav.href('reviews', s === 'pending' ? {} : { status: s });
        if (s === status) a.setAttribute('aria-current', 'true');
        else a.removeAttribute('aria-current');
      }
      const exportLink = el<HTMLAnchorElement>('labels-export');
      exportLink.hidden = !canLabel || !projectId;
      exportLink.href = `/api/projects/${encodeURIComponent(projectId)}/labels`;
      exportLink.download = `labels-${projectId}.jsonl`;
      items = [];
      nextKey = undefined;
      labeling = null;
      text('reviews-status', '');
      el('reviews-body').replaceChildren();
      el('reviews-table').hidden = true;
      el('reviews-empty').hidden = true;
      el('reviews-more').hidden = true;
      if (!projectId) return;
      void loadContext().then(() => load(false));
    },
  };
}
