// Lists: the chosen project's lists (name, kind, entries, description);
// admins create one and delete one after a confirmation. A list's page
// (?list=<name>, with ?prefix=<start> when searching) pages through its
// entries by value; admins add values in bulk (one per line, with an
// optional note and expiry) and remove them, and a refused batch names each
// bad value by its line (the 400's details by index): nothing of it changed.
import { button, el, labelCells, node, problem, text } from '../../browser/dom.js';
import type { Shared } from '../lazy.js';
import type { Route } from '../router.js';
import { fmt, report, utcTime } from '../types.js';
import { reaches } from '../views.js';
import { detailsOf, KIND_LABELS, msTime, type List, type ListEntry } from './common.js';

const PAGE = 100;

/** The non-empty lines of a textarea, each with its line number. */
export function linesOf(value: string): { value: string; line: number }[] {
  return value.split('\n').flatMap((raw, i) => (raw.trim() ? [{ value: raw.trim(), line: i + 1 }] : []));
}

export function listsView({ api, projects, nav, role }: Shared): { show(route: Route): void } {
  const calls = api.dashboardDecisions;
  const canEdit = reaches(role, 'admin');
  let projectId = '';
  let shown: List | null = null;
  let prefix = '';
  let cursor: string | undefined;
  let generation = 0;

  for (const id of ['list-form', 'list-describe', 'entries-add-form', 'entries-remove-form']) el(id).hidden = !canEdit;

  // All lists.
  const listRow = (l: List) => {
    const tr = node('tr');
    const name = node('td', '', 'text');
    const open = node('a', l.name, 'mono');
    open.href = nav.href('lists', { list: l.name });
    name.append(open);
    const actions = node('td', '', 'nowrap');
    if (canEdit) {
      const ask = button('Delete', 'btn small danger', () => {
        const sure = button('Confirm delete', 'btn small danger', () => void remove(l));
        const cancel = button('Cancel', 'btn small secondary', () => {
          actions.replaceChildren(ask);
          ask.focus();
        });
        actions.replaceChildren(sure, ' ', cancel);
        sure.focus();
      });
      ask.setAttribute('aria-label', `Delete ${l.name}`);
      actions.append(ask);
    }
    tr.append(
      name,
      node('td', `${l.kind}: ${KIND_LABELS[l.kind]}`),
      node('td', fmt(l.entries)),
      node('td', l.description || '—', 'text'),
      node('td', utcTime(l.updatedAt), 'nowrap'),
      actions,
    );
    return tr;
  };

  const loadLists = async () => {
    const mine = ++generation;
    report('lists-error', null);
    const res = await calls.listLists({ params: { projectId } });
    if (mine !== generation) return;
    if (res.status !== 200) return report('lists-error', res);
    const body = el<HTMLTableSectionElement>('lists-body');
    body.replaceChildren(...res.body.lists.map(listRow));
    labelCells(body);
    el('lists-table').hidden = res.body.lists.length === 0;
    el('lists-empty').hidden = res.body.lists.length > 0;
    text('lists-empty', canEdit ? 'No lists yet: create one below, then name it in a rule.' : 'No lists yet.');
  };

  const remove = async (l: List) => {
    report('lists-error', null);
    const res = await calls.deleteList({ params: { projectId, name: l.name } });
    if (res.status !== 200) return report('lists-error', res);
    await loadLists();
    text('lists-status', `Deleted ${l.name} and its ${fmt(l.entries)} ${l.entries === 1 ? 'entry' : 'entries'}.`);
  };

  el('list-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const name = el<HTMLInputElement>('list-name');
      const description = el<HTMLInputElement>('list-description');
      report('list-create-error', null);
      const res = await calls.createList({
        params: { projectId },
        body: { name: name.value.trim(), kind: el<HTMLSelectElement>('list-kind').value as List['kind'], description: description.value.trim() },
      });
      if (res.status !== 201) return report('list-create-error', res);
      name.value = '';
      description.value = '';
      nav.go(nav.href('lists', { list: res.body.name }));
    })();
  });

  // One list.
  const entryRow = (e: ListEntry) => {
    const tr = node('tr');
    const expires = node('td', e.expiresAt === null ? 'never' : msTime(e.expiresAt), 'nowrap');
    if (e.expiresAt !== null && e.expiresAt <= Date.now()) expires.append(' ', node('span', 'expired', 'badge plain'));
    const actions = node('td');
    if (canEdit)
      actions.append(
        button('Remove', 'btn small secondary', () => void change('remove', [{ value: e.value, line: 1 }], { remove: [e.value] }), `Remove ${e.value}`),
      );
    tr.append(node('td', e.value, 'mono text'), node('td', e.note || '—', 'text'), expires, node('td', utcTime(e.addedAt), 'nowrap'), actions);
    return tr;
  };

  const showFacts = (l: List) => {
    shown = l;
    text('list-title', `List ${l.name}`);
    text(
      'list-facts',
      `${l.kind}: ${KIND_LABELS[l.kind]} · ${fmt(l.entries)} ${l.entries === 1 ? 'entry' : 'entries'}${l.description ? ` · ${l.description}` : ''}`,
    );
    el<HTMLInputElement>('list-shown-description').value = l.description;
  };

  const loadEntries = async (more: boolean) => {
    if (!shown) return;
    const mine = more ? generation : ++generation;
    const alert = more ? 'entries-more-error' : 'list-error';
    report(alert, null);
    const res = await calls.listEntries({
      params: { projectId, name: shown.name },
      query: { limit: PAGE, ...(prefix && { prefix }), ...(more && cursor && { cursor }) },
    });
    if (mine !== generation) return;
    text('entries-status', '');
    if (res.status !== 200) return report(alert, res);
    const body = el<HTMLTableSectionElement>('entries-body');
    if (more) body.append(...res.body.entries.map(entryRow));
    else body.replaceChildren(...res.body.entries.map(entryRow));
    labelCells(body);
    cursor = res.body.cursor;
    const n = body.rows.length;
    el('entries-table').hidden = n === 0;
    el('entries-empty').hidden = n > 0;
    text('entries-empty', prefix ? `No values start with “${prefix}”.` : 'No values yet.');
    el('entries-more').hidden = !cursor;
    if (n) text('entries-status', `${fmt(n)} ${n === 1 ? 'value' : 'values'}${prefix ? ` starting with “${prefix}”` : ''}${cursor ? '; there are more' : ''}.`);
  };

  const openList = async (name: string) => {
    const mine = ++generation;
    shown = null;
    report('list-error', null);
    text('list-title', `List ${name}`);
    text('list-facts', '');
    el('entries-body').replaceChildren();
    el('entries-table').hidden = true;
    el('entries-empty').hidden = true;
    el('entries-more').hidden = true;
    text('entries-status', 'Loading…');
    const res = await calls.getList({ params: { projectId, name } });
    if (mine !== generation) return;
    if (res.status !== 200) {
      text('entries-status', '');
      return report('list-error', res);
    }
    showFacts(res.body);
    await loadEntries(false);
  };

  /** Adds or removes values (`area`: the field they came from, emptied once they are in); a refused batch lists each bad value by its line. */
  const change = async (
    kind: 'add' | 'remove',
    lines: { value: string; line: number }[],
    body: { add: { value: string; note?: string; expiresAt?: number }[] } | { remove: string[] },
    area?: HTMLTextAreaElement,
  ): Promise<void> => {
    if (!shown) return;
    const problems = el(`entries-${kind}-problems`);
    problem(`entries-${kind}-error`, null);
    problems.replaceChildren();
    text(`entries-${kind}-status`, '');
    const res = await calls.changeListEntries({ params: { projectId, name: shown.name }, body });
    if (res.status !== 200) {
      const bad = detailsOf(res).flatMap((d) => {
        const i = /^(?:add|remove)\[(\d+)\]/.exec(d.path)?.[1];
        const at = i === undefined ? undefined : lines[Number(i)];
        return at ? [node('li', `Line ${at.line}: ${at.value} — ${d.message}`)] : [];
      });
      if (!bad.length) return report(`entries-${kind}-error`, res);
      problem(
        `entries-${kind}-error`,
        `${bad.length} ${bad.length === 1 ? 'value does' : 'values do'} not fit a list of ${KIND_LABELS[shown.kind]}: nothing was ${kind === 'add' ? 'added' : 'removed'}.`,
      );
      problems.append(...bad);
      return;
    }
    if (area) area.value = '';
    const r = res.body;
    showFacts({ ...shown, entries: r.entries });
    await loadEntries(false);
    text(
      `entries-${kind}-status`,
      kind === 'add'
        ? `Added ${fmt(r.added)}, updated ${fmt(r.updated)}; the list holds ${fmt(r.entries)}.`
        : `Removed ${fmt(r.removed)}; the list holds ${fmt(r.entries)}.`,
    );
  };

  el('entries-add-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const area = el<HTMLTextAreaElement>('entries-add');
    const lines = linesOf(area.value);
    if (!lines.length) return problem('entries-add-error', 'Write the values to add, one per line.');
    const note = el<HTMLInputElement>('entries-note').value.trim();
    const expires = el<HTMLInputElement>('entries-expires').value;
    const expiresAt = expires ? Date.parse(`${expires}:00Z`) : undefined;
    const add = lines.map((l) => ({ value: l.value, ...(note && { note }), ...(expiresAt !== undefined && { expiresAt }) }));
    void change('add', lines, { add }, area);
  });
  el('entries-remove-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const area = el<HTMLTextAreaElement>('entries-remove');
    const lines = linesOf(area.value);
    if (!lines.length) return problem('entries-remove-error', 'Write the values to remove, one per line.');
    void change('remove', lines, { remove: lines.map((l) => l.value) }, area);
  });
  el('list-describe').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      if (!shown) return;
      text('list-describe-status', '');
      report('list-error', null);
      const res = await calls.updateList({
        params: { projectId, name: shown.name },
        body: { description: el<HTMLInputElement>('list-shown-description').value.trim() },
      });
      if (res.status !== 200) return report('list-error', res);
      showFacts(res.body);
      text('list-describe-status', 'Description saved.');
    })();
  });
  el('entries-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    const start = el<HTMLInputElement>('entries-prefix').value.trim();
    if (shown) nav.go(nav.href('lists', { list: shown.name, ...(start && { prefix: start }) }));
  });
  el('entries-clear').addEventListener('click', () => shown && nav.go(nav.href('lists', { list: shown.name })));
  el('entries-more').addEventListener('click', () => void loadEntries(true));

  return {
    show(route) {
      projectId = projects.current()?.id ?? '';
      const name = route.query.get('list');
      prefix = route.query.get('prefix') ?? '';
      cursor = undefined;
      el<HTMLInputElement>('entries-prefix').value = prefix;
      el('list-back').setAttribute('href', nav.href('lists'));
      el('lists-panel').hidden = !!name;
      el('list-panel').hidden = !name;
      for (const id of ['entries-add', 'entries-remove']) {
        problem(`${id}-error`, null);
        el(`${id}-problems`).replaceChildren();
        text(`${id}-status`, '');
      }
      text('list-describe-status', '');
      if (!projectId) return;
      if (name) void openList(name);
      else void loadLists();
    },
  };
}
