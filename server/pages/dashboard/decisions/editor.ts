// The rule editor of the Rules page: name, action, mode, enabled, the
// expression and, for a block rule, the response to answer. While the
// expression is typed it is tried on the project's recent events (a preview
// call a moment after the last keystroke): an expression that does not
// compile shows its error at its place (the line, a caret under the column,
// and a link that puts the cursor there); one that does, how many of the
// last events it matches, with a few of them linked to the Events page.
// Beside it the fields and functions an expression may use (the plain-data
// vocabulary the server's engine is declared from), each inserted at the
// cursor when chosen. Viewers read; analysts also try; admins edit.
import { RULE_FIELDS, RULE_FUNCTIONS, type RuleAction, type RuleMode } from '../../../../contract/ruleFields.js';
import { errorText, toLogin } from '../../browser/client.js';
import { button, el, node, problem, text } from '../../browser/dom.js';
import type { Shared } from '../lazy.js';
import { fmt } from '../types.js';
import { reaches } from '../views.js';
import { detailsOf, msTime, type Detail, type Preview, type Rule } from './common.js';

/** How long after the last keystroke the expression is tried. */
const CHECK_DELAY_MS = 400;
/** Matching events linked under the counts. */
const SAMPLE_LINKS = 5;

type BlockResponse = NonNullable<Rule['response']>;

export interface Editor {
  /** Shows `rule` (a new one: its id is ''), calling `done` with the edited rule. */
  open(rule: Rule, title: string, done: (rule: Rule) => void): void;
}

/** `lines`: "name: value" lines as headers; a string names the first bad line. */
export function parseHeaders(lines: string): Record<string, string> | string {
  const headers: Record<string, string> = {};
  const all = lines.split('\n');
  for (const [i, line] of all.entries()) {
    if (!line.trim()) continue;
    const colon = line.indexOf(':');
    if (colon < 1) return `Headers, line ${i + 1}: write it as name: value`;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

export function ruleEditor({ api, projects, nav, role }: Shared): Editor {
  const canEdit = reaches(role, 'admin');
  const canTry = reaches(role, 'analyst');
  const name = el<HTMLInputElement>('rule-name');
  const action = el<HTMLSelectElement>('rule-action');
  const mode = el<HTMLSelectElement>('rule-mode');
  const enabled = el<HTMLInputElement>('rule-enabled');
  const expression = el<HTMLTextAreaElement>('rule-expression');
  const status = el<HTMLInputElement>('rule-status');
  const headers = el<HTMLTextAreaElement>('rule-headers');
  const body = el<HTMLTextAreaElement>('rule-body');
  const marker = el('rule-marker');
  const check = el('rule-check');
  let current: Rule | null = null;
  let finish: (rule: Rule) => void = () => undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by every check: an older answer is dropped. */
  let generation = 0;

  for (const field of [name, expression, status, headers, body]) field.readOnly = !canEdit;
  for (const field of [action, mode, enabled]) field.disabled = !canEdit;
  // Analysts may change the expression to try it; only admins keep the change.
  expression.readOnly = !canTry;
  el('rule-actions').hidden = !canEdit;
  el('rule-done-help').hidden = !canEdit;
  const roleNote = el('rule-editor-role');
  roleNote.hidden = canEdit;
  roleNote.textContent = canTry
    ? 'You can change the expression to try it on recent events; an admin saves rules.'
    : 'You can read this rule; analysts try expressions and admins change rules.';

  const showBlock = () => (el('rule-block').hidden = action.value !== 'block');
  action.addEventListener('change', showBlock);

  const clearCheck = () => {
    marker.hidden = true;
    expression.removeAttribute('aria-invalid');
    check.replaceChildren();
    el('rule-sample').replaceChildren();
  };

  /** The compile error at its place: line and column, the line with a caret under the column. */
  const showError = (source: string, d: Detail) => {
    const at = Math.max(0, Math.min(d.offset ?? 0, source.length));
    const start = source.lastIndexOf('\n', at - 1) + 1;
    const end = source.indexOf('\n', at) < 0 ? source.length : source.indexOf('\n', at);
    const line = source.slice(start, end);
    const gutter = `${d.line ?? 1} | `;
    // Tabs before the column stay tabs, so the caret lines up under them.
    const pad = `${' '.repeat(gutter.length - 2)}| ${line.slice(0, at - start).replace(/[^\t]/g, ' ')}`;
    marker.textContent = `${gutter}${line}\n${pad}^`;
    marker.hidden = false;
    expression.setAttribute('aria-invalid', 'true');
    const where = `Line ${d.line ?? 1}, column ${d.column ?? at - start + 1}`;
    const p = node('p', '', 'error');
    p.id = 'rule-check-error';
    // The position is a link that puts the cursor there.
    const go = button(where, 'link', () => {
      expression.focus();
      expression.setSelectionRange(at, Math.min(at + 1, source.length));
    });
    p.append(go, `: ${d.message}`);
    check.replaceChildren(p);
    el('rule-sample').replaceChildren();
  };

  const showPreview = (p: Preview) => {
    clearCheck();
    const said =
      p.examined === 0
        ? 'Compiles. No events in the last 7 days to try it on.'
        : `Compiles. Matches ${fmt(p.matched)} of the last ${fmt(p.examined)} ${p.examined === 1 ? 'event' : 'events'} in 7 days${
            p.errored ? `; fails on ${fmt(p.errored)} (a failing rule is skipped)` : ''
          }.`;
    const summary = node('p', said, 'ok');
    summary.id = 'rule-preview';
    check.replaceChildren(summary);
    el('rule-sample').replaceChildren(
      ...p.sample.slice(0, SAMPLE_LINKS).map((s) => {
        const li = node('li');
        const a = node('a', s.requestId, 'mono');
        a.href = nav.href('events', { visitorId: s.visitorId, event: s.requestId });
        li.append(a, node('span', ` ${msTime(s.timestamp)} ${s.url}`, 'muted'));
        return li;
      }),
    );
  };

  const tryIt = async () => {
    const source = expression.value;
    const projectId = projects.current()?.id;
    const mine = ++generation;
    if (!source.trim() || !projectId) return clearCheck();
    check.replaceChildren(node('p', 'Checking…', 'muted'));
    const res = await api.dashboardDecisions.previewRule({ params: { projectId }, body: { expression: source } });
    if (mine !== generation) return;
    if (res.status === 200) return showPreview(res.body);
    const first = detailsOf(res)[0];
    if (res.status === 400 && first) return showError(source, first);
    clearCheck();
    check.replaceChildren(node('p', errorText(res), 'error'));
    // (The contract's types of these routes name only their success and 400.)
    if ((res.status as number) === 401) toLogin();
  };

  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void tryIt(), CHECK_DELAY_MS);
  };
  if (canTry) expression.addEventListener('input', later);

  /** Puts `value` in the expression at the cursor (or in place of the selection). */
  const insert = (value: string) => {
    if (expression.readOnly) return;
    expression.focus();
    expression.setRangeText(value, expression.selectionStart, expression.selectionEnd, 'end');
    expression.dispatchEvent(new Event('input'));
  };

  // The reference: every field, then every function (its example inserted), filtered as one types.
  const entry = (label: string, kind: string, description: string, value: string) => {
    const li = node('li');
    li.dataset.find = `${label} ${description}`.toLowerCase();
    li.append(
      canTry ? button(label, 'link mono', () => insert(value), `Insert ${value}`) : node('code', label),
      ' ',
      node('span', kind, 'muted'),
      node('span', description, 'sub-line'),
    );
    return li;
  };
  const reference = el('reference-list');
  reference.append(
    ...RULE_FIELDS.map((f) => entry(f.path, f.type, f.description, f.path)),
    ...RULE_FUNCTIONS.map((f) => entry(f.name, f.signature, `${f.description}. Example: ${f.example}`, f.example)),
  );
  el('reference-help').hidden = !canTry;
  el<HTMLInputElement>('reference-filter').addEventListener('input', (event) => {
    const q = (event.target as HTMLInputElement).value.trim().toLowerCase();
    for (const li of Array.from(reference.children) as HTMLElement[]) li.hidden = !li.dataset.find!.includes(q);
  });

  /** The rule as edited; a string says what is missing. */
  const read = (): Rule | string => {
    if (!name.value.trim()) return 'Give the rule a name.';
    if (!expression.value.trim()) return 'Write the expression.';
    const rule: Rule = {
      id: current?.id ?? '',
      name: name.value.trim(),
      expression: expression.value,
      action: action.value as RuleAction,
      enabled: enabled.checked,
      mode: mode.value as RuleMode,
    };
    if (rule.action !== 'block' || !(status.value.trim() || headers.value.trim() || body.value)) return rule;
    const code = status.value.trim() ? Number(status.value) : 403;
    if (!Number.isInteger(code) || code < 400 || code > 499) return 'The block status is a number from 400 to 499.';
    const parsed = parseHeaders(headers.value);
    if (typeof parsed === 'string') return parsed;
    const response: BlockResponse = { status: code };
    if (Object.keys(parsed).length) response.headers = parsed;
    if (body.value) response.body = body.value;
    return { ...rule, response };
  };

  el('rule-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const rule = read();
    if (typeof rule === 'string') return problem('rule-error', rule);
    problem('rule-error', null);
    finish(rule);
  });
  el('rule-cancel').addEventListener('click', () => nav.go(nav.href('rules')));

  return {
    open(rule, title, done) {
      current = rule;
      finish = done;
      text('rule-editor-title', title);
      name.value = rule.name;
      action.value = rule.action;
      mode.value = rule.mode;
      enabled.checked = rule.enabled;
      expression.value = rule.expression;
      status.value = rule.response ? String(rule.response.status) : '';
      headers.value = Object.entries(rule.response?.headers ?? {})
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n');
      body.value = rule.response?.body ?? '';
      showBlock();
      problem('rule-error', null);
      clearCheck();
      clearTimeout(timer);
      generation++;
      if (canTry && rule.expression) void tryIt();
    },
  };
}
