// Rules: the chosen project's ruleset in order, with each rule's hits and
// errors (the stats route), edited as a draft: reorder, add (blank or from a
// template), edit (the editor), delete, switch live/test and enabled, the
// default action; Save sends the draft as a new version on the version it
// was made on, and when someone else saved first (409) says so and offers
// to load theirs. The address names the rule open in the editor
// (?rule=<id>, ?rule=new&template=<id>); the draft lives until saved or
// discarded, across the dashboard's pages (leaving the page asks first).
import { RULE_TEMPLATES } from '../../../../contract/ruleTemplates.js';
import { errorBody } from '../../browser/client.js';
import { button, el, labelCells, node, problem, text } from '../../browser/dom.js';
import type { Shared } from '../lazy.js';
import type { Route } from '../router.js';
import { fmt, report, utcTime } from '../types.js';
import { reaches } from '../views.js';
import { detailsOf, type Rule, type Ruleset, type RuleStat } from './common.js';
import { ruleEditor } from './editor.js';

interface Draft {
  /** The version the draft was made on (Save sends it as baseVersion). */
  base: Ruleset;
  rules: Rule[];
  defaultAction: Rule['action'];
}

const same = (r: Rule) =>
  JSON.stringify([
    r.id,
    r.name,
    r.expression,
    r.action,
    r.enabled,
    r.mode,
    r.response ? [r.response.status, r.response.headers ?? {}, r.response.body ?? ''] : 0,
  ]);
const changed = (d: Draft) =>
  d.defaultAction !== d.base.defaultAction || d.rules.length !== d.base.rules.length || d.rules.some((r, i) => same(r) !== same(d.base.rules[i]!));

const badge = (action: Rule['action']) => node('span', action, action === 'block' ? 'badge warn' : 'badge plain');

/** A new rule's id: its name in lower case with dashes, unique in the draft. */
export function newRuleId(name: string, taken: readonly string[]): string {
  const stem =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 56)
      .replace(/-+$/, '') || 'rule';
  let id = stem;
  for (let n = 2; taken.includes(id); n++) id = `${stem}-${n}`;
  return id;
}

export function rulesView(shared: Shared): { show(route: Route): void } {
  const { api, projects, nav, role } = shared;
  const calls = api.dashboardDecisions;
  const canEdit = reaches(role, 'admin');
  const canTry = reaches(role, 'analyst');
  const editor = ruleEditor(shared);
  const drafts = new Map<string, Draft>();
  let stats = new Map<string, RuleStat>();
  /** The last save's compile errors, by the rule's index. */
  let errors = new Map<number, string>();
  let projectId = '';
  let generation = 0;

  const fresh = (base: Ruleset): Draft => ({ base, rules: base.rules.map((r) => ({ ...r })), defaultAction: base.defaultAction });
  const draft = () => drafts.get(projectId);
  const defaultAction = el<HTMLSelectElement>('ruleset-default');
  const save = el<HTMLButtonElement>('ruleset-save');

  defaultAction.disabled = !canEdit;
  save.hidden = !canEdit;
  el('ruleset-discard').hidden = !canEdit;
  el('rule-add').hidden = !canTry;
  const roleNote = el('ruleset-role');
  roleNote.hidden = canEdit;
  roleNote.textContent = canTry
    ? 'You can read the rules and try expressions in the editor; an admin changes them.'
    : 'You can read the rules; analysts try expressions and admins change them.';

  el('rule-templates').append(
    ...RULE_TEMPLATES.map((t) => {
      const li = node('li');
      li.append(node('h3', t.name), badge(t.action), node('p', t.catches, 'muted'), node('code', t.expression));
      if (canTry) {
        const use = node('a', 'Use this template', 'btn small secondary');
        use.dataset.template = t.id;
        use.setAttribute('aria-label', `Use this template: ${t.name}`);
        const p = node('p');
        p.append(use);
        li.append(p);
      }
      return li;
    }),
  );

  /** Loads the version in force and its stats; a draft with changes is kept. */
  const load = async (): Promise<boolean> => {
    const mine = ++generation;
    report('ruleset-error', null);
    const [ruleset, hits] = await Promise.all([calls.getRuleset({ params: { projectId } }), calls.getRuleStats({ params: { projectId } })]);
    if (mine !== generation) return false;
    if (ruleset.status !== 200) {
      report('ruleset-error', ruleset);
      return false;
    }
    const d = draft();
    if (!d || !changed(d)) drafts.set(projectId, fresh(ruleset.body));
    stats = new Map(hits.status === 200 ? hits.body.rules.map((s) => [s.ruleId, s]) : []);
    return true;
  };

  const move = (from: number, to: number) => {
    const d = draft()!;
    const [rule] = d.rules.splice(from, 1);
    d.rules.splice(to, 0, rule!);
    errors = new Map();
    render();
    // Focus stays on the rule's control that moved it (its other one at either end).
    const row = el<HTMLTableSectionElement>('rules-body').rows[to];
    const buttons = Array.from(row?.querySelectorAll<HTMLButtonElement>('button[data-move]') ?? []).filter((b) => !b.disabled);
    (buttons.find((b) => b.dataset.move === (to < from ? 'up' : 'down')) ?? buttons[0])?.focus();
  };

  const row = (r: Rule, i: number, d: Draft) => {
    const tr = node('tr');
    const rule = node('td', '', 'text');
    const open = node('a', r.name);
    open.href = nav.href('rules', { rule: r.id });
    rule.append(open, node('span', r.id, 'sub-line mono'));
    const error = errors.get(i);
    if (error) rule.append(node('span', error, 'sub-line error'));
    const modeCell = node('td');
    const enabledCell = node('td');
    if (canEdit) {
      const select = node('select');
      select.setAttribute('aria-label', `Mode of ${r.name}`);
      select.append(...['live', 'test'].map((m) => Object.assign(node('option', m), { value: m })));
      select.value = r.mode;
      select.addEventListener('change', () => {
        r.mode = select.value as Rule['mode'];
        render();
      });
      modeCell.append(select);
      const box = node('input');
      box.type = 'checkbox';
      box.checked = r.enabled;
      box.setAttribute('aria-label', `${r.name} enabled`);
      box.addEventListener('change', () => {
        r.enabled = box.checked;
        render();
      });
      enabledCell.append(box);
    } else {
      modeCell.textContent = r.mode;
      enabledCell.textContent = r.enabled ? 'yes' : 'no';
    }
    // Hits of the saved rule; a rule new in the draft has none yet.
    const s = d.base.rules.some((b) => b.id === r.id) ? stats.get(r.id) : undefined;
    const errorsCell = node('td', s ? fmt(s.errors24h) : '—');
    if (s?.errors24h) errorsCell.className = 'revoked';
    const actions = node('td', '', 'nowrap');
    if (canEdit) {
      const up = button('Up', 'btn small secondary', () => move(i, i - 1), `Move ${r.name} up`);
      const down = button('Down', 'btn small secondary', () => move(i, i + 1), `Move ${r.name} down`);
      up.dataset.move = 'up';
      down.dataset.move = 'down';
      up.disabled = i === 0;
      down.disabled = i === d.rules.length - 1;
      const remove = button(
        'Delete',
        'btn small danger',
        () => {
          d.rules.splice(i, 1);
          errors = new Map();
          render();
          text('ruleset-status', `Deleted ${r.name} from the draft.`);
          save.focus();
        },
        `Delete ${r.name}`,
      );
      actions.append(up, ' ', down, ' ', remove);
    }
    const actionCell = node('td');
    actionCell.append(badge(r.action));
    tr.append(
      node('td', String(i + 1)),
      rule,
      actionCell,
      modeCell,
      enabledCell,
      node('td', s ? fmt(s.hits24h) : '—'),
      node('td', s ? fmt(s.hits7d) : '—'),
      errorsCell,
      actions,
    );
    return tr;
  };

  const render = () => {
    const d = draft();
    if (!d) return;
    const body = el<HTMLTableSectionElement>('rules-body');
    body.replaceChildren(...d.rules.map((r, i) => row(r, i, d)));
    labelCells(body);
    el('rules-table').hidden = d.rules.length === 0;
    el('rules-empty').hidden = d.rules.length > 0;
    defaultAction.value = d.defaultAction;
    const base = d.base;
    text(
      'ruleset-version',
      base.version === 0
        ? 'No rules saved yet (version 0): every identification is allowed.'
        : `Version ${base.version}, saved ${utcTime(base.updatedAt ?? '')} by ${base.updatedBy ?? 'unknown'}.`,
    );
    const dirty = changed(d);
    save.disabled = !dirty;
    save.textContent = `Save as version ${base.version + 1}`;
    el('ruleset-discard').hidden = !canEdit || !dirty;
    text('ruleset-dirty', dirty ? 'Unsaved changes: Save makes them the new version; until then identifications use the version above.' : '');
  };

  const showList = async () => {
    el('rule-editor').hidden = true;
    el('ruleset-panel').hidden = false;
    if (await load()) render();
  };

  const showRule = async (id: string, template: string | null) => {
    el('ruleset-panel').hidden = true;
    el('rule-editor').hidden = true;
    if (!draft() && !(await load())) {
      el('ruleset-panel').hidden = false;
      return;
    }
    const d = draft()!;
    if (id === 'new') {
      const t = RULE_TEMPLATES.find((x) => x.id === template);
      const blank: Rule = { id: '', name: t?.name ?? '', expression: t?.expression ?? '', action: t?.action ?? 'review', enabled: true, mode: 'live' };
      editor.open(blank, t ? `New rule from the template ${t.name}` : 'New rule', (rule) => {
        d.rules.push({
          ...rule,
          id: newRuleId(
            rule.name,
            d.rules.map((r) => r.id),
          ),
        });
        nav.go(nav.href('rules'));
        text('ruleset-status', `Added ${rule.name} to the draft: Save makes it the new version.`);
      });
    } else {
      const at = d.rules.findIndex((r) => r.id === id);
      if (at < 0) {
        el('ruleset-panel').hidden = false;
        return report('ruleset-error', `No rule ${id} in this draft: it may have been deleted.`);
      }
      editor.open(d.rules[at]!, canEdit ? `Edit ${d.rules[at]!.name}` : d.rules[at]!.name, (rule) => {
        d.rules[at] = rule;
        errors.delete(at);
        nav.go(nav.href('rules'));
        text('ruleset-status', `Changed ${rule.name} in the draft: Save makes it the new version.`);
      });
    }
    el('rule-editor').hidden = false;
  };

  const submit = async () => {
    const d = draft();
    if (!d) return;
    report('ruleset-error', null);
    text('ruleset-status', '');
    el('ruleset-conflict').hidden = true;
    save.disabled = true;
    const res = await calls.putRuleset({
      params: { projectId },
      body: {
        rules: d.rules.map(({ response, ...r }) => (r.action === 'block' && response ? { ...r, response } : r)),
        defaultAction: d.defaultAction,
        baseVersion: d.base.version,
      },
    });
    save.disabled = false;
    if (res.status === 200) {
      drafts.set(projectId, fresh(res.body));
      errors = new Map();
      render();
      text('ruleset-status', `Saved version ${res.body.version}: in force on the next identification.`);
      // The new version's stats.
      if (await load()) render();
      return;
    }
    if (res.status === 409 && errorBody(res)?.code === 'ruleset_conflict') {
      text(
        'ruleset-conflict-text',
        `Someone else saved a newer version of these rules since you loaded version ${d.base.version}. Load the latest version (your unsaved changes are lost), then make them again.`,
      );
      el('ruleset-conflict').hidden = false;
      el('ruleset-reload').focus();
      return;
    }
    errors = new Map(
      detailsOf(res).flatMap((x) => {
        const i = /^rules\[(\d+)\]/.exec(x.path)?.[1];
        return i === undefined ? [] : [[Number(i), x.line ? `Line ${x.line}, column ${x.column}: ${x.message}` : x.message] as const];
      }),
    );
    render();
    report('ruleset-error', res);
  };

  el('ruleset-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });
  defaultAction.addEventListener('change', () => {
    draft()!.defaultAction = defaultAction.value as Rule['action'];
    render();
  });
  el('ruleset-discard').addEventListener('click', () => {
    drafts.set(projectId, fresh(draft()!.base));
    errors = new Map();
    render();
    text('ruleset-status', 'Changes discarded.');
  });
  el('ruleset-reload').addEventListener('click', () => {
    drafts.delete(projectId);
    errors = new Map();
    el('ruleset-conflict').hidden = true;
    void showList().then(() => text('ruleset-status', 'Loaded the latest version.'));
  });
  el('rule-add').addEventListener('click', () => nav.go(nav.href('rules', { rule: 'new' })));
  // Unsaved rules are not lost to a reload or a closed tab without a question.
  window.addEventListener('beforeunload', (event) => {
    if ([...drafts.values()].some(changed)) event.preventDefault();
  });

  return {
    show(route) {
      projectId = projects.current()?.id ?? '';
      problem('rule-error', null);
      el('rule-back').setAttribute('href', nav.href('rules'));
      for (const a of Array.from(document.querySelectorAll<HTMLAnchorElement>('#rule-templates a[data-template]')))
        a.href = nav.href('rules', { rule: 'new', template: a.dataset.template! });
      if (!projectId) return;
      const rule = route.query.get('rule');
      void (rule ? showRule(rule, route.query.get('template')) : showList());
    },
  };
}
