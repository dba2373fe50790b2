// Events: the chosen project's identifications through the explorer API,
// with every filter of GET /v1/events. The filters live in the address
// (/dashboard/events?project=…&vpn=true&country=DE), so a search survives a
// reload and Back returns to it; Load more pages on, a row opens its full
// event as JSON and names it in the address (event=<requestId>: a reload or a
// shared link opens it, Close removes it, Back and Forward step through the
// events opened without reading the list again), a visitor id links to that
// visitor's page.
import type { z } from 'zod';
import type { EventSummarySchema } from '../../../contract/explorer.js';
import { api } from '../browser/client.js';
import { button, el, labelCells, node, text } from '../browser/dom.js';
import type { Nav, Route } from './router.js';
import { botCategoryLabel } from './bots.js';
import { report, type Projects } from './types.js';

type EventSummary = z.infer<typeof EventSummarySchema>;
type Query = NonNullable<Parameters<typeof api.explorer.listProjectEvents>[0]['query']>;

const TEXT = ['visitorId', 'linkedId', 'ip', 'country'] as const;
const CHOICES = ['bot', 'botCategory', 'botIdentity', 'reverse'] as const;
const FLAGS = ['suspect', 'vpn', 'tor', 'proxy', 'incognito', 'tampering', 'virtualMachine', 'devtools', 'ipBlocklist'] as const;
const TIMES = ['start', 'end'] as const;
const FILTERS = [...TEXT, ...CHOICES, ...FLAGS, ...TIMES, 'minSuspectScore'] as const;

export const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
export const place = (country: string, ...rest: string[]) => [...rest, country].filter(Boolean).join(', ') || 'unknown location';

/** The API's query from the address: booleans and numbers as such; the server judges every value. */
function queryOf(params: URLSearchParams): Query {
  const q: Record<string, string | number | boolean> = {};
  for (const name of FILTERS) {
    const raw = params.get(name);
    if (raw === null || raw === '') continue;
    const asNumber = Number(raw);
    if ((FLAGS as readonly string[]).includes(name) || name === 'reverse') q[name] = raw === 'true' ? true : raw === 'false' ? false : raw;
    else if ((TIMES as readonly string[]).includes(name) || name === 'minSuspectScore')
      q[name] = Number.isFinite(asNumber) && raw.trim() !== '' ? asNumber : raw;
    else q[name] = raw;
  }
  return q;
}

/** The address's query but the open event: what the list shown depends on. */
function withoutEvent(params: URLSearchParams): string {
  const rest = new URLSearchParams(params);
  rest.delete('event');
  rest.sort();
  return rest.toString();
}

/** datetime-local fields are read and written as UTC. */
const toField = (ms: string | null) => (ms && Number.isFinite(Number(ms)) ? new Date(Number(ms)).toISOString().slice(0, 16) : '');
const fromField = (value: string) => (value ? String(Date.parse(`${value}:00Z`)) : '');

export function eventsView(projects: Projects, nav: Nav): { show(route: Route): void } {
  let projectId = '';
  let query: Query = {};
  let shown: EventSummary[] = [];
  let nextKey: string | undefined;
  let selected: string | null = null;
  /** Bumped by every new list: answers to an older one are dropped. */
  let generation = 0;

  for (const name of FLAGS) {
    const select = el<HTMLSelectElement>(`f-${name}`);
    select.replaceChildren(
      ...[
        ['', 'any'],
        ['true', 'yes'],
        ['false', 'no'],
      ].map(([value, label]) => Object.assign(node('option', label), { value })),
    );
  }

  const field = (name: (typeof FILTERS)[number]) => el<HTMLInputElement | HTMLSelectElement>(`f-${name}`);

  const writeForm = (params: URLSearchParams) => {
    for (const name of FILTERS) field(name).value = (TIMES as readonly string[]).includes(name) ? toField(params.get(name)) : (params.get(name) ?? '');
  };

  const readForm = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const name of FILTERS) {
      const value = field(name).value.trim();
      const v = (TIMES as readonly string[]).includes(name) ? fromField(value) : value;
      if (v) out[name] = v;
    }
    return out;
  };

  const verdictCell = (e: EventSummary) => {
    const td = node('td');
    if (e.bot === 'bad') td.append(node('span', 'bad bot', 'badge warn'));
    else if (e.bot === 'good') td.append(node('span', 'good bot', 'badge good'));
    else td.append(node('span', 'no bot', 'badge plain'));
    if (e.suspect) td.append(' ', node('span', 'suspect', 'badge warn'));
    // Which bot, and how far its name is proven (a name alone proves nothing: "Googlebot · spoofed").
    const info = e.botInfo;
    if (info)
      td.append(
        node(
          'span',
          `${info.name ?? botCategoryLabel(info.category)} · ${info.name ? `${botCategoryLabel(info.category)} · ` : ''}${info.identity}`,
          'sub-line',
        ),
      );
    td.append(node('span', `bot ${e.botProbability.toFixed(2)} · suspect score ${e.suspectScore}`, 'sub-line'));
    return td;
  };

  const eventRow = (e: EventSummary) => {
    const tr = node('tr', '', 'pick');
    tr.dataset.requestId = e.requestId;
    if (e.requestId === selected) tr.classList.add('selected');
    const time = node('td');
    // The accessible name starts with the visible text (what voice control users say).
    const open = button(when(e.timestamp), 'link nowrap', () => openEvent(e.requestId), `${when(e.timestamp)}: full event ${e.requestId}`);
    open.title = e.requestId;
    time.append(open);
    if (e.linkedId !== undefined) time.append(node('span', `linkedId ${e.linkedId}`, 'sub-line text'));
    const who = node('td');
    const visitor = node('a', e.visitorId, 'mono');
    visitor.href = nav.href('visitor', {}, e.visitorId);
    visitor.setAttribute('aria-label', `Visitor ${e.visitorId}`);
    who.append(visitor, node('span', e.browser, 'sub-line'));
    const where = node('td');
    where.append(node('span', e.ip, 'mono'), node('span', place(e.country, e.city), 'sub-line'));
    tr.append(time, who, where, verdictCell(e), node('td', e.confidence.toFixed(2)));
    // The whole row opens the event (its first button does the same for the keyboard).
    tr.addEventListener('click', (ev) => {
      if ((ev.target as HTMLElement).closest('button, a')) return;
      openEvent(e.requestId);
    });
    return tr;
  };

  const render = () => {
    const body = el<HTMLTableSectionElement>('events-body');
    body.replaceChildren(...shown.map(eventRow));
    labelCells(body);
    el('events-table').hidden = shown.length === 0;
    const filtered = Object.keys(query).length > 0;
    const empty = el('events-empty');
    empty.hidden = shown.length > 0;
    empty.textContent =
      nextKey !== undefined
        ? 'No match among the events looked at so far: Load more looks further.'
        : filtered
          ? 'No events match these filters: widen them, or Clear.'
          : 'No identifications in this project yet: install the agent on your site (Install), or try the demo page.';
    el('events-more').hidden = nextKey === undefined;
    const n = shown.length;
    text('events-status', n === 0 ? '' : `${n} ${n === 1 ? 'event' : 'events'}${nextKey !== undefined ? '; there may be more' : ''}.`);
  };

  /** The first page for the current filters (more: the next page, added below). */
  const load = async (more = false) => {
    if (!projectId) return;
    const mine = more ? generation : ++generation;
    report('events-error', null);
    report('events-more-error', null);
    const moreButton = el<HTMLButtonElement>('events-more');
    moreButton.disabled = true;
    const res = await api.explorer.listProjectEvents({ params: { projectId }, query: { ...query, ...(more && nextKey ? { paginationKey: nextKey } : {}) } });
    moreButton.disabled = false;
    if (mine !== generation) return;
    if (res.status !== 200) {
      if (!more) {
        shown = [];
        nextKey = undefined;
        render();
        el('events-empty').hidden = true;
        text('events-status', '');
      }
      return report(more ? 'events-more-error' : 'events-error', res);
    }
    shown = more ? [...shown, ...res.body.events] : res.body.events;
    nextKey = res.body.paginationKey;
    render();
  };

  const markSelected = () => {
    for (const tr of Array.from(el<HTMLTableSectionElement>('events-body').rows)) tr.classList.toggle('selected', tr.dataset.requestId === selected);
  };

  const showEvent = async (requestId: string) => {
    selected = requestId;
    markSelected();
    const detail = el('event-detail');
    text('event-detail-id', requestId);
    report('event-detail-error', null);
    text('event-json', 'Loading…');
    detail.hidden = false;
    detail.scrollIntoView({ block: 'nearest' });
    // ts-rest puts path parameters in as they are.
    const res = await api.demo.getAccountEvent({ params: { requestId: encodeURIComponent(requestId) } });
    if (selected !== requestId) return;
    if (res.status !== 200) {
      text('event-json', '');
      return report('event-detail-error', res);
    }
    text('event-json', JSON.stringify(res.body, null, 2));
    el('event-json').focus();
  };

  /** An event chosen in the list: shown, and named in the address. */
  const openEvent = (requestId: string) => {
    nav.amend({ event: requestId });
    void showEvent(requestId);
  };

  /** Hides the event's JSON; `focus`: back to its row's button (the Close button). */
  const closeEvent = (focus = false) => {
    const was = selected;
    selected = null;
    el('event-detail').hidden = true;
    markSelected();
    if (focus && was) el<HTMLTableSectionElement>('events-body').querySelector<HTMLButtonElement>(`tr[data-request-id="${was}"] button`)?.focus();
  };

  el('events-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    nav.go(nav.href('events', readForm()));
  });
  el('events-clear').addEventListener('click', () => nav.go(nav.href('events')));
  el('events-more').addEventListener('click', () => void load(true));
  el('event-detail-close').addEventListener('click', () => {
    nav.amend({ event: null });
    closeEvent(true);
  });

  return {
    show(route) {
      const event = route.query.get('event');
      // Back or Forward over opening or closing an event: the list stays as it was read (Load more included).
      if (route.from?.view === 'events' && withoutEvent(route.from.query) === withoutEvent(route.query)) {
        if (!event) closeEvent();
        else if (event !== selected) void showEvent(event);
        return;
      }
      projectId = projects.current()?.id ?? '';
      query = queryOf(route.query);
      writeForm(route.query);
      shown = [];
      nextKey = undefined;
      closeEvent();
      el('events-body').replaceChildren();
      el('events-table').hidden = true;
      el('events-empty').hidden = true;
      el('events-more').hidden = true;
      text('events-status', projectId ? 'Loading…' : '');
      void load();
      // ?event=req_…: that event's JSON as well (a reload, a shared link; the rule editor's sample links here).
      if (event) void showEvent(event);
    },
  };
}
