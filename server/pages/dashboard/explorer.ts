// The dashboard's events explorer and visitor timeline, for the project
// chosen under API keys: the newest identifications (filters for visitor,
// linkedId, bot and suspect; Load more), a row's full event as JSON, and a
// visitor's visits newest first (Older visits; Back to events, also the
// browser's Back). Lists come through the ts-rest client of
// contract/explorer.ts; everything from the server is set with textContent.
import type { z } from 'zod';
import type { EventSummarySchema, VisitorTimelineSchema, VisitSummarySchema } from '../../../contract/explorer.js';
import { api } from '../browser/client.js';
import { button, el, labelCells, node, text } from '../browser/dom.js';
import { report, type Projects } from './types.js';

type EventSummary = z.infer<typeof EventSummarySchema>;
type VisitSummary = z.infer<typeof VisitSummarySchema>;
type Timeline = z.infer<typeof VisitorTimelineSchema>;
interface Filters {
  visitorId?: string;
  linkedId?: string;
  bot?: 'good' | 'bad' | 'none' | 'all';
  suspect?: boolean;
}

export function explorerPanel(projects: Projects): { show(): void } {
  let projectId = '';
  let filters: Filters = {};
  let shown: EventSummary[] = [];
  let nextKey: string | undefined;
  let selected: string | null = null;
  /** Bumped by every new list: answers to an older one are dropped. */
  let generation = 0;
  let visitor: { id: string; before?: string } | null = null;
  /** Where the page was scrolled when a visitor was opened from the events: Back returns there. */
  let eventsScroll: number | null = null;

  const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
  const VISITOR_HASH = /^#visitor=(iq_[0-9A-HJKMNP-TV-Z]{26})$/;

  function place(country: string, ...rest: string[]): string {
    return [...rest, country].filter(Boolean).join(', ') || 'unknown location';
  }

  // ---- Events ----

  function readFilters(): Filters {
    const f: Filters = {};
    const visitorId = el<HTMLInputElement>('f-visitor').value.trim();
    const linkedId = el<HTMLInputElement>('f-linked').value.trim();
    const bot = el<HTMLSelectElement>('f-bot').value;
    const suspect = el<HTMLSelectElement>('f-suspect').value;
    if (visitorId) f.visitorId = visitorId;
    if (linkedId) f.linkedId = linkedId;
    if (bot) f.bot = bot as Filters['bot'];
    if (suspect) f.suspect = suspect === 'true';
    return f;
  }

  function writeFilters(f: Filters): void {
    el<HTMLInputElement>('f-visitor').value = f.visitorId ?? '';
    el<HTMLInputElement>('f-linked').value = f.linkedId ?? '';
    el<HTMLSelectElement>('f-bot').value = f.bot ?? '';
    el<HTMLSelectElement>('f-suspect').value = f.suspect === undefined ? '' : String(f.suspect);
  }

  function verdictCell(e: EventSummary): HTMLTableCellElement {
    const td = node('td');
    if (e.bot === 'bad') td.append(node('span', 'bad bot', 'badge warn'));
    else if (e.bot === 'good') td.append(node('span', 'good bot', 'badge good'));
    else td.append(node('span', 'no bot', 'badge plain'));
    if (e.suspect) td.append(' ', node('span', 'suspect', 'badge warn'));
    td.append(node('span', `bot ${e.botProbability.toFixed(2)} · suspect score ${e.suspectScore}`, 'sub-line'));
    return td;
  }

  function eventRow(e: EventSummary): HTMLTableRowElement {
    const tr = node('tr', '', 'pick');
    tr.dataset.requestId = e.requestId;
    if (e.requestId === selected) tr.classList.add('selected');
    const time = node('td');
    const open = button(when(e.timestamp), 'link nowrap', () => void showEvent(e.requestId), `Full event ${e.requestId}`);
    open.title = e.requestId;
    time.append(open);
    if (e.linkedId !== undefined) time.append(node('span', `linkedId ${e.linkedId}`, 'sub-line text'));
    const who = node('td');
    who.append(
      button(
        e.visitorId,
        'link mono',
        (ev) => {
          ev.stopPropagation();
          openVisitor(e.visitorId);
        },
        `Visits of ${e.visitorId}`,
      ),
      node('span', e.browser, 'sub-line'),
    );
    const where = node('td');
    where.append(node('span', e.ip, 'mono'), node('span', place(e.country, e.city), 'sub-line'));
    tr.append(time, who, where, verdictCell(e), node('td', e.confidence.toFixed(2)));
    // The whole row opens the event (its first button does the same for the keyboard).
    tr.addEventListener('click', (ev) => {
      if ((ev.target as HTMLElement).closest('button')) return;
      void showEvent(e.requestId);
    });
    return tr;
  }

  function renderEvents(): void {
    const body = el<HTMLTableSectionElement>('events-body');
    body.replaceChildren(...shown.map(eventRow));
    labelCells(body);
    el('events-table').hidden = shown.length === 0;
    const filtered = Object.keys(filters).length > 0;
    const empty = el('events-empty');
    empty.hidden = shown.length > 0;
    empty.textContent =
      nextKey !== undefined
        ? 'No match among the newest events looked at so far: Load more looks further back.'
        : filtered
          ? 'No events match these filters.'
          : 'No identifications in this project yet. Install the agent on your site (above), or try the demo page.';
    el('events-more').hidden = nextKey === undefined;
    const n = shown.length;
    text('events-status', n === 0 ? '' : `${n} ${n === 1 ? 'event' : 'events'}${nextKey !== undefined ? '; there may be more' : ''}.`);
  }

  /** The first page for the current filters (more: the next page, added below). */
  async function loadEvents(more = false): Promise<void> {
    if (!projectId) return;
    const mine = more ? generation : ++generation;
    const errorId = more ? 'events-more-error' : 'events-error';
    report('events-error', null);
    report('events-more-error', null);
    const moreButton = el<HTMLButtonElement>('events-more');
    moreButton.disabled = true;
    const res = await api.explorer.listProjectEvents({ params: { projectId }, query: { ...filters, ...(more && nextKey ? { paginationKey: nextKey } : {}) } });
    moreButton.disabled = false;
    if (mine !== generation) return;
    if (res.status !== 200) {
      if (!more) {
        shown = [];
        nextKey = undefined;
        renderEvents();
        el('events-empty').hidden = true;
      }
      return report(errorId, res);
    }
    shown = more ? [...shown, ...res.body.events] : res.body.events;
    nextKey = res.body.paginationKey;
    renderEvents();
  }

  function search(event: Event): void {
    event.preventDefault();
    filters = readFilters();
    closeEvent();
    void loadEvents();
  }

  function clearFilters(): void {
    writeFilters({});
    filters = {};
    closeEvent();
    void loadEvents();
  }

  // ---- One event's JSON ----

  function markSelected(): void {
    for (const tr of Array.from(el<HTMLTableSectionElement>('events-body').rows)) tr.classList.toggle('selected', tr.dataset.requestId === selected);
  }

  async function showEvent(requestId: string): Promise<void> {
    selected = requestId;
    markSelected();
    const detail = el('event-detail');
    text('event-detail-id', requestId);
    report('event-detail-error', null);
    text('event-json', 'Loading…');
    detail.hidden = false;
    detail.scrollIntoView({ block: 'nearest' });
    // The session route the demo page reads too.
    const res = await api.demo.getAccountEvent({ params: { requestId: encodeURIComponent(requestId) } });
    if (selected !== requestId) return;
    if (res.status !== 200) {
      text('event-json', '');
      return report('event-detail-error', res);
    }
    text('event-json', JSON.stringify(res.body, null, 2));
    el('event-json').focus();
  }

  /** Hides the event's JSON; `focus`: back to its row's button (the Close button). */
  function closeEvent(focus = false): void {
    const was = selected;
    selected = null;
    el('event-detail').hidden = true;
    markSelected();
    if (focus && was) el<HTMLTableSectionElement>('events-body').querySelector<HTMLButtonElement>(`tr[data-request-id="${was}"] button`)?.focus();
  }

  // ---- Visitor timeline ----

  function visitRow(v: VisitSummary): HTMLTableRowElement {
    const tr = node('tr');
    const time = node('td', when(v.timestamp), 'nowrap');
    if (v.originalVisitorId) time.append(node('span', `as ${v.originalVisitorId}`, 'sub-line mono'));
    const risk = node('td');
    if (v.riskFactors.length) risk.append(...v.riskFactors.map((r) => node('span', r, 'badge plain')));
    else risk.append(node('span', 'none', 'muted'));
    risk.append(node('span', `bot ${v.botProbability.toFixed(2)}`, 'sub-line'));
    tr.append(
      time,
      node('td', place(v.country, v.city, v.region)),
      node('td', v.network || '—', 'text'),
      node('td', v.browser),
      node('td', v.confidence.toFixed(2)),
      risk,
    );
    return tr;
  }

  function showPanel(which: 'events' | 'visitor'): void {
    el('events-panel').hidden = which !== 'events' || !projectId;
    el('visitor-panel').hidden = which !== 'visitor';
  }

  /** Opens a visitor's timeline; a history entry (#visitor=…) lets the browser's Back return to the events. */
  function openVisitor(id: string): void {
    eventsScroll = window.scrollY;
    history.pushState({ visitor: id }, '', `#visitor=${id}`);
    void loadVisitor(id);
  }

  async function loadVisitor(id: string, before?: string): Promise<void> {
    const more = before !== undefined;
    visitor = { id };
    report('visitor-error', null);
    report('visits-more-error', null);
    if (!more) {
      text('visitor-id', id);
      el('visitor-facts').hidden = true;
      el('visits-table').hidden = true;
      el('visits-more').hidden = true;
      el('visits-empty').hidden = true;
      text('visitor-status', 'Loading…');
      showPanel('visitor');
      el('visitor-panel').scrollIntoView({ block: 'start' });
      el('visitor-title').focus({ preventScroll: true });
    }
    const res = await api.explorer.getVisitorTimeline({ params: { visitorId: id }, query: more ? { before } : {} });
    if (visitor?.id !== id) return;
    text('visitor-status', '');
    if (res.status !== 200) return report(more ? 'visits-more-error' : 'visitor-error', res);
    renderTimeline(res.body, more);
  }

  function renderTimeline(t: Timeline, more: boolean): void {
    visitor = { id: t.visitorId, ...(t.nextBefore ? { before: t.nextBefore } : {}) };
    text('visitor-id', t.visitorId);
    text('visitor-total', String(t.totalVisits));
    text('visitor-first', `${when(t.firstSeenAt)} UTC`);
    text('visitor-merged', t.mergedFrom.length ? t.mergedFrom.join(', ') : 'none');
    el('visitor-facts').hidden = false;
    const body = el<HTMLTableSectionElement>('visits-body');
    const rows = t.visits.map(visitRow);
    if (more) body.append(...rows);
    else body.replaceChildren(...rows);
    labelCells(body);
    el('visits-table').hidden = body.rows.length === 0;
    el('visits-empty').hidden = !(more && t.visits.length === 0);
    el('visits-more').hidden = !t.nextBefore;
  }

  function backToEvents(): void {
    if ((history.state as { visitor?: string } | null)?.visitor) {
      history.back();
      return;
    }
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    showEvents();
  }

  function showEvents(): void {
    visitor = null;
    showPanel('events');
    if (eventsScroll === null) el('events-panel').scrollIntoView({ block: 'start' });
    else window.scrollTo(0, eventsScroll);
    eventsScroll = null;
  }

  /** The page's address decides: #visitor=iq_… shows that timeline, anything else the events. */
  function route(): void {
    const m = VISITOR_HASH.exec(location.hash);
    if (m) void loadVisitor(m[1]!);
    else if (visitor) showEvents();
  }

  /** Shows the explorer for the chosen project; called again when another is chosen. */
  function show(): void {
    projectId = projects.current()?.id ?? '';
    text('events-project', projects.current()?.name ?? '');
    shown = [];
    nextKey = undefined;
    closeEvent();
    el('events-body').replaceChildren();
    el('events-empty').hidden = true;
    text('events-status', projectId ? 'Loading…' : '');
    if (!visitor) showPanel('events');
    void loadEvents();
  }

  function start(): void {
    el('events-filter').addEventListener('submit', search);
    el('events-clear').addEventListener('click', clearFilters);
    el('events-more').addEventListener('click', () => void loadEvents(true));
    el('event-detail-close').addEventListener('click', () => closeEvent(true));
    el('visitor-back').addEventListener('click', backToEvents);
    el('visits-more').addEventListener('click', () => visitor?.before && void loadVisitor(visitor.id, visitor.before));
    el('visitor-events').addEventListener('click', () => {
      if (!visitor) return;
      filters = { visitorId: visitor.id };
      writeFilters(filters);
      closeEvent();
      void loadEvents();
      // The list changes: show it from its top rather than where the page was.
      eventsScroll = null;
      backToEvents();
    });
    window.addEventListener('popstate', route);
    route();
  }

  start();
  return { show };
}
