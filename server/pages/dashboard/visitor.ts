// Visitor: one device's page (/dashboard/visitors/<id>): its visits newest
// first in every project (Older visits), the visitors merged into it, the
// linkedIds it was seen with, its related visitors in the chosen project
// (the same machine in other browsers, each linked to its own page; More),
// a link to its events, and deleting its data.
import type { z } from 'zod';
import type { VisitorTimelineSchema, VisitSummarySchema } from '../../../contract/explorer.js';
import type { RelatedVisitorSchema } from '../../../contract/visitors.js';
import { api } from '../browser/client.js';
import { button, el, labelCells, node, text } from '../browser/dom.js';
import { place, when } from './explorer.js';
import type { Nav, Route } from './router.js';
import { report, type Projects } from './types.js';

type VisitSummary = z.infer<typeof VisitSummarySchema>;
type Timeline = z.infer<typeof VisitorTimelineSchema>;
type RelatedVisitor = z.infer<typeof RelatedVisitorSchema>;

/** What weighed most, in words (contract/visitors.ts: RELATED_EVIDENCE). */
const EVIDENCE: Record<RelatedVisitor['evidence'], string> = {
  hardware: 'Hardware: GPU, screens, colour, touch, audio',
  os_rendering: 'OS rendering: fonts, languages',
  network: 'Shared networks',
};
/** A probability as a whole percentage, never rounded up (0.996 is not 100%). */
const percent = (p: number) => `${Math.floor(p * 100 + 1e-9)}%`;

const VISITOR_ID = /^iq_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Events looked at per project for the linkedIds a visitor was seen with. */
const LINKED_SCAN = 100;

/** `canDelete`: the role may delete a visitor's data (admin). */
export function visitorView(projects: Projects, nav: Nav, canDelete: boolean): { show(route: Route): void } {
  let visitor: { id: string; before?: string } | null = null;
  /** Whose related visitors are shown, and the next page's key; a new object per visitor tells a late answer from the current one. */
  let related: { id: string; next?: string | undefined } | null = null;

  const visitRow = (v: VisitSummary) => {
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
  };

  const renderTimeline = (t: Timeline, more: boolean) => {
    visitor = { id: t.visitorId, ...(t.nextBefore ? { before: t.nextBefore } : {}) };
    text('visitor-id', t.visitorId);
    text('visitor-total', String(t.totalVisits));
    text('visitor-first', `${when(t.firstSeenAt)} UTC`);
    text('visitor-merged', t.mergedFrom.length ? t.mergedFrom.join(', ') : 'none');
    el<HTMLAnchorElement>('visitor-events').href = nav.href('events', { visitorId: t.visitorId });
    el('visitor-facts').hidden = false;
    const body = el<HTMLTableSectionElement>('visits-body');
    const rows = t.visits.map(visitRow);
    if (more) body.append(...rows);
    else body.replaceChildren(...rows);
    labelCells(body);
    el('visits-table').hidden = body.rows.length === 0;
    el('visits-empty').hidden = !(more && t.visits.length === 0);
    el('visits-more').hidden = !t.nextBefore;
  };

  /** The linkedIds of the visitor's newest events in each project. */
  const showLinked = async (id: string) => {
    text('visitor-linked', 'Loading…');
    const pages = await Promise.all(
      projects.list().map((p) => api.explorer.listProjectEvents({ params: { projectId: p.id }, query: { visitorId: id, limit: LINKED_SCAN } })),
    );
    if (visitor?.id !== id) return;
    const seen = new Set<string>();
    for (const page of pages) if (page.status === 200) for (const e of page.body.events) if (e.linkedId !== undefined) seen.add(e.linkedId);
    text('visitor-linked', seen.size ? [...seen].sort().join(', ') : 'none in its newest events');
  };

  const relatedRow = (r: RelatedVisitor) => {
    const tr = node('tr');
    const who = node('td');
    const link = who.appendChild(node('a', r.visitorId, 'mono'));
    link.href = nav.href('visitor', {}, r.visitorId);
    tr.append(who, node('td', percent(r.probability)), node('td', EVIDENCE[r.evidence], 'text'), node('td', when(r.lastSeenTogetherAt), 'nowrap'));
    return tr;
  };

  /** The visitor's related visitors in the chosen project (a change of project shows the page again), a page at a time. */
  const showRelated = async (id: string, more = false) => {
    const project = projects.current();
    el('related').hidden = !project;
    if (!project) return;
    const query = more && related?.next ? { paginationKey: related.next } : {};
    if (!more) {
      related = { id };
      text('related-project', project.name);
      text('related-status', 'Loading…');
      for (const part of ['related-table', 'related-about', 'related-empty', 'related-more']) el(part).hidden = true;
    }
    const asked = related;
    const moreButton = el<HTMLButtonElement>('related-more');
    moreButton.disabled = true;
    const res = await api.explorer.getProjectRelatedVisitors({ params: { projectId: project.id, visitorId: id }, query });
    moreButton.disabled = false;
    if (!asked || related !== asked) return;
    text('related-status', '');
    report(more ? 'related-more-error' : 'related-error', res.status === 200 ? null : res);
    if (res.status !== 200) return;
    asked.next = res.body.paginationKey;
    const body = el<HTMLTableSectionElement>('related-body');
    const rows = res.body.relatedVisitors.map(relatedRow);
    if (more) body.append(...rows);
    else body.replaceChildren(...rows);
    labelCells(body);
    const none = body.rows.length === 0;
    el('related-table').hidden = el('related-about').hidden = none;
    el('related-empty').hidden = !none;
    moreButton.hidden = !asked.next;
  };

  const load = async (id: string, before?: string) => {
    const more = before !== undefined;
    report('visitor-error', null);
    report('visits-more-error', null);
    if (!more) text('visitor-status', 'Loading…');
    const res = await api.explorer.getVisitorTimeline({ params: { visitorId: id }, query: more ? { before } : {} });
    if (visitor?.id !== id) return;
    text('visitor-status', '');
    if (res.status !== 200) return report(more ? 'visits-more-error' : 'visitor-error', res);
    renderTimeline(res.body, more);
    if (!more) {
      el('forget-panel').hidden = !canDelete;
      void showLinked(res.body.visitorId);
      void showRelated(res.body.visitorId);
    }
  };

  /** Deleting takes two steps in place: Delete visitor data, then Confirm delete (or Cancel). */
  const forgetButton = (): HTMLButtonElement => {
    const b = button('Delete visitor data', 'btn danger', () => {
      const cancel = button('Cancel', 'btn secondary', () => {
        el('forget-actions').replaceChildren(forgetButton());
        el('forget-actions').querySelector('button')?.focus();
      });
      const confirm = button('Confirm delete', 'btn danger', () => void forget());
      el('forget-actions').replaceChildren(confirm, ' ', cancel);
      cancel.focus();
    });
    b.id = 'forget';
    return b;
  };

  const forget = async () => {
    if (!visitor) return;
    const id = visitor.id;
    report('forget-error', null);
    const res = await api.explorer.deleteAccountVisitor({ params: { visitorId: id } });
    el('forget-actions').replaceChildren(forgetButton());
    if (res.status !== 202) return report('forget-error', res);
    text(
      'forget-status',
      `Deleting ${res.body.visitorId} (${res.body.deletionId}, ${res.body.status}): its data disappears in the background, in every project.`,
    );
    el('visitor-panel').hidden = true;
    el('forget-actions').hidden = true;
  };

  el('visits-more').addEventListener('click', () => visitor?.before && void load(visitor.id, visitor.before));
  el('related-more').addEventListener('click', () => related?.next && void showRelated(related.id, true));
  el('visitor-open').addEventListener('submit', (event) => {
    event.preventDefault();
    const id = el<HTMLInputElement>('visitor-open-id').value.trim();
    if (!VISITOR_ID.test(id)) return report('visitor-open-error', 'A visitor id is iq_ followed by 26 letters and digits.');
    report('visitor-open-error', null);
    nav.go(nav.href('visitor', {}, id));
  });

  return {
    show(route) {
      const id = route.visitorId;
      visitor = id ? { id } : null;
      related = null;
      text('visitor-id', id ?? '');
      el<HTMLInputElement>('visitor-open-id').value = id ?? '';
      report('visitor-open-error', null);
      el('visitor-none').hidden = id !== undefined;
      el('visitor-panel').hidden = id === undefined;
      el('forget-panel').hidden = true;
      el('forget-actions').hidden = false;
      el('forget-actions').replaceChildren(forgetButton());
      report('forget-error', null);
      text('forget-status', '');
      el('visitor-facts').hidden = true;
      el('visits-table').hidden = true;
      el('visits-more').hidden = true;
      el('visits-empty').hidden = true;
      el('related').hidden = true;
      if (id) void load(id);
    },
  };
}
