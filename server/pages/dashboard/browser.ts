// The dashboard page script. It calls the API only through the ts-rest client
// of the contract. Everything from the server is set with textContent or as
// SVG attributes (createElementNS), never parsed as HTML.
import type { z } from 'zod';
import type { AccountSchema, ApiKeySchema, ProjectSchema, UsageSchema } from '../../../contract/account.js';
import { daysInPeriod } from '../../metering/period.js';
import { api, errorText, toLogin as signIn } from '../browser/client.js';
import { el, text } from '../browser/dom.js';
import { showWho, signOut as endSession } from '../browser/session.js';
import { showExplorer, startExplorer } from './explorer.js';
import { showIntegrations, startIntegrations } from './integrations.js';

type Account = z.infer<typeof AccountSchema>;
type Usage = z.infer<typeof UsageSchema>;
type Project = z.infer<typeof ProjectSchema>;
type ApiKey = z.infer<typeof ApiKeySchema>;
interface Answer {
  status: number;
  body: unknown;
}

const ROTATE_AFTER_DAYS = 90;
const DAY_MS = 86_400_000;
const LOCALE = document.documentElement.lang || 'en';

const client = api.account;

let account: Account;
let usage: Usage;
let projects: Project[] = [];
let keys: ApiKey[] = [];
let projectId = '';
let editing: Project | null = null;

const fmt = (n: number) => n.toLocaleString(LOCALE);
const calls = (n: number) => `${fmt(n)} ${n === 1 ? 'call' : 'calls'}`;
const planLabel = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);
const utcDate = (iso: string) => iso.slice(0, 10);
const utcTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
const parseDomains = (raw: string) => raw.split(/[\s,]+/).filter(Boolean);

function toLogin(): void {
  signIn('/dashboard');
}

/** The API's `{error}` text; an expired session goes back to sign-in. */
function errorOf(res: Answer): string {
  if (res.status === 401) toLogin();
  return errorText(res);
}

function showError(id: string, message: string): void {
  text(id, message);
  el(id).hidden = false;
}

function hideError(id: string): void {
  el(id).hidden = true;
}

function node<K extends keyof HTMLElementTagNameMap>(tag: K, content = '', className = ''): HTMLElementTagNameMap[K] {
  const n = document.createElement(tag);
  n.textContent = content;
  if (className) n.className = className;
  return n;
}

/** Each cell gets its column's name, which narrow screens show in front of it (pages.css). */
function labelCells(tbodyId: string): void {
  const body = el<HTMLTableSectionElement>(tbodyId);
  const names = Array.from(body.closest('table')?.querySelectorAll('thead th') ?? [], (th) => th.textContent ?? '');
  for (const tr of Array.from(body.rows)) {
    Array.from(tr.cells).forEach((td, i) => {
      if (names[i] && !td.querySelector('.sr-only')) td.dataset.label = names[i]!;
    });
  }
}

// ---- Install ----

/** The value of a browser key created on this page (shown once), per project: it goes into the snippet. */
const freshKeys = new Map<string, string>();

function renderInstall(): void {
  const project = projects.find((p) => p.id === projectId);
  text('install-project', project?.name ?? '');
  const origin = location.origin;
  const fresh = freshKeys.get(projectId);
  const active = keys.find((k) => k.status === 'active' && k.type === 'live') ?? keys.find((k) => k.status === 'active' && k.type === 'test');
  const key = fresh ?? 'svc_live_YOUR_KEY';
  const note = fresh
    ? 'The snippets carry the key you just created. Copy them now: the key is shown only once.'
    : active
      ? `Paste the value of a browser key of this project (for example ${active.hint}, “${active.name}”): it was shown once when created. Or create a live key above and it is filled in here.`
      : 'This project has no browser key yet: create a live key above (a test key for development) and it is filled in here.';
  text('install-note', note);
  el<HTMLTextAreaElement>('snippet-html').value = `<script src="${origin}/agent.js"></script>
<script>
  DeviceId.load({ apiKey: '${key}', endpoint: '${origin}' })
    .then((agent) => agent.get({ linkedId: 'user-42' }))
    .then((result) => {
      // Send result.requestId to your backend; it reads the full event with a secret key.
      console.log(result.visitorId, result.requestId);
    });
</script>`;
  el<HTMLTextAreaElement>('snippet-npm').value = `npm install @deviceid/agent

import { load } from '@deviceid/agent';

const agent = await load({ apiKey: '${key}', endpoint: '${origin}' });
const { visitorId, requestId } = await agent.get({ linkedId: 'user-42' });`;
}

function button(label: string, className: string, onClick: () => void, ariaLabel?: string): HTMLButtonElement {
  const b = node('button', label, className);
  b.type = 'button';
  if (ariaLabel) b.setAttribute('aria-label', ariaLabel);
  b.addEventListener('click', onClick);
  return b;
}

// ---- Sign out ----

async function signOut(): Promise<void> {
  await endSession(
    () => location.assign('/login'),
    (res) => showError('load-error', errorOf(res)),
  );
}

// ---- Plan and usage ----

function monthName(period: string): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1, 1)).toLocaleString(LOCALE, { month: 'long', year: 'numeric', timeZone: 'UTC' });
}

/** 12.3%, and small shares with two significant digits (0.0012%) so that any use shows. */
function percent(count: number, limit: number): string {
  const share = limit > 0 ? count / limit : 0;
  const digits = share > 0 && share < 0.01 ? { maximumSignificantDigits: 2 } : { maximumFractionDigits: 1 };
  return share.toLocaleString(LOCALE, { style: 'percent', ...digits });
}

function renderPlan(): void {
  text('plan-name', planLabel(account.plan));
  text('limit-rps', `${fmt(account.limits.rps)} per second`);
  text('limit-monthly', fmt(usage.limit));
  text('usage-count', `${fmt(usage.count)} of ${fmt(usage.limit)} (${monthName(usage.period)})`);
  text('usage-percent', `${percent(usage.count, usage.limit)} used`);
  const meter = el<HTMLMeterElement>('usage-meter');
  meter.max = Math.max(usage.limit, 1);
  meter.high = meter.max * 0.8;
  meter.value = usage.count;
  el<HTMLSelectElement>('plan-select').value = account.plan;
  el('plan-form').hidden = !account.canChangePlan;
  el('plan-assigned').hidden = account.canChangePlan;
  renderChart();
}

const SVG_NS = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(parent: Element | null, tag: K, attrs: Record<string, string | number>, content?: string) {
  const n = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (content !== undefined) n.textContent = content;
  parent?.append(n);
  return n;
}

/** 1, 2, 5, 10, 20, 50, … at or above n: round axis ends. */
function niceCeil(n: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(n));
  return ([1, 2, 5, 10].find((f) => f * magnitude >= n) ?? 10) * magnitude;
}

/** Daily bars of the month (future days empty), with the quota in the caption. */
function renderChart(): void {
  const { period, days, count, limit, testCount } = usage;
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
  el('chart').replaceChildren(root);
  text(
    'chart-caption',
    `Daily identify calls in ${monthName(period)} (UTC days). Live keys count against the monthly quota of ${fmt(limit)}: ${fmt(count)} used (${percent(count, limit)}). Test keys, shown apart, never count: ${calls(testCount)}.`,
  );
}

async function switchPlan(event: Event): Promise<void> {
  event.preventDefault();
  const plan = el<HTMLSelectElement>('plan-select').value as Account['plan'];
  const submit = el<HTMLButtonElement>('plan-submit');
  hideError('plan-error');
  text('plan-status', '');
  submit.disabled = true;
  const res = await client.setPlan({ body: { plan } });
  submit.disabled = false;
  if (res.status !== 200) return showError('plan-error', errorOf(res));
  account = res.body;
  usage = { ...usage, limit: account.limits.monthly };
  renderPlan();
  text('plan-status', `Switched to ${planLabel(plan)}.`);
}

// ---- Projects ----

/** The API names a bad domain by its index (`allowedDomains.1: …`): add the value itself. */
function domainError(res: Answer, domains: string[]): string {
  const message = errorOf(res);
  const m = /^allowedDomains\.(\d+):/.exec(message);
  const bad = m ? domains[Number(m[1])] : undefined;
  return bad === undefined ? message : `${message} (“${bad}”)`;
}

function renderProjects(): void {
  const rows = projects.map((p) => {
    const tr = node('tr');
    const domains = p.allowedDomains.length ? node('td', p.allowedDomains.join(', '), 'text') : node('td', 'any host', 'muted');
    const actions = node('td');
    actions.append(button('Edit', 'link', () => startEdit(p), `Edit ${p.name}`));
    tr.append(node('td', p.name, 'text'), domains, actions);
    return tr;
  });
  el('projects-body').replaceChildren(...rows);
  labelCells('projects-body');
  const select = el<HTMLSelectElement>('key-project');
  select.replaceChildren(
    ...projects.map((p) => {
      const option = node('option', p.name);
      option.value = p.id;
      return option;
    }),
  );
  select.value = projectId;
  text('events-project', projects.find((p) => p.id === projectId)?.name ?? '');
}

function startEdit(p: Project): void {
  editing = p;
  text('edit-title', p.name);
  el<HTMLInputElement>('edit-name').value = p.name;
  el<HTMLTextAreaElement>('edit-domains').value = p.allowedDomains.join('\n');
  hideError('edit-error');
  el('edit-form').hidden = false;
  el('edit-name').focus();
}

function stopEdit(): void {
  editing = null;
  el('edit-form').hidden = true;
}

async function saveEdit(event: Event): Promise<void> {
  event.preventDefault();
  if (!editing) return;
  const domains = parseDomains(el<HTMLTextAreaElement>('edit-domains').value);
  const res = await client.updateProject({
    params: { projectId: editing.id },
    body: { name: el<HTMLInputElement>('edit-name').value, allowedDomains: domains },
  });
  if (res.status !== 200) return showError('edit-error', domainError(res, domains));
  const updated = res.body;
  projects = projects.map((p) => (p.id === updated.id ? updated : p));
  stopEdit();
  renderProjects();
}

async function createProject(event: Event): Promise<void> {
  event.preventDefault();
  const name = el<HTMLInputElement>('project-name');
  const domainsField = el<HTMLTextAreaElement>('project-domains');
  const domains = parseDomains(domainsField.value);
  hideError('project-error');
  const res = await client.createProject({ body: { name: name.value, allowedDomains: domains } });
  if (res.status !== 201) return showError('project-error', domainError(res, domains));
  projects = [...projects, res.body];
  name.value = '';
  domainsField.value = '';
  renderProjects();
}

// ---- API keys ----

async function loadKeys(): Promise<void> {
  hideError('key-error');
  const res = await client.listKeys({ params: { projectId } });
  if (res.status !== 200) return showError('key-error', errorOf(res));
  keys = res.body.keys;
  renderKeys();
}

function ageDays(k: ApiKey): number {
  return Math.max(0, Math.floor((Date.now() - Date.parse(k.createdAt)) / DAY_MS));
}

function renderKeys(): void {
  const rows = keys.map((k) => {
    const tr = node('tr');
    const status = node('td', k.status, k.status === 'revoked' ? 'revoked' : '');
    if (k.revokedAt) status.append(node('br'), node('span', utcTime(k.revokedAt), 'muted'));
    const age = ageDays(k);
    const ageCell = node('td', `${fmt(age)} ${age === 1 ? 'day' : 'days'}`, 'nowrap');
    if (k.status === 'active' && age >= ROTATE_AFTER_DAYS) {
      const badge = node('span', 'rotate', 'badge warn');
      badge.title = `Older than ${ROTATE_AFTER_DAYS} days: create a new key, switch to it, then revoke this one.`;
      ageCell.append(' ', badge);
    }
    const created = node('td', utcDate(k.createdAt), 'nowrap');
    created.title = k.createdAt;
    const actions = node('td');
    if (k.status === 'active') actions.append(revokeButton(k, actions));
    tr.append(
      node('td', k.name, 'text'),
      node('td', k.type, 'nowrap'),
      node('td', k.hint, 'mono nowrap'),
      node('td', k.source, 'nowrap'),
      status,
      created,
      node('td', k.lastUsedAt ? utcTime(k.lastUsedAt) : 'never', k.lastUsedAt ? '' : 'muted'),
      ageCell,
      actions,
    );
    return tr;
  });
  el('keys-body').replaceChildren(...rows);
  labelCells('keys-body');
  renderInstall();
  el('keys-empty').hidden = keys.length > 0;
}

/** Revoking takes two steps in place: Revoke, then Confirm revoke (or Cancel). */
function revokeButton(k: ApiKey, cell: HTMLElement): HTMLButtonElement {
  return button(
    'Revoke',
    'btn small danger',
    () => {
      const cancel = button('Cancel', 'btn small secondary', () => {
        cell.replaceChildren(revokeButton(k, cell));
        cell.querySelector('button')?.focus();
      });
      const confirm = button('Confirm revoke', 'btn small danger', () => void revoke(k), `Confirm revoke ${k.name}`);
      cell.replaceChildren(confirm, ' ', cancel);
      cancel.focus();
    },
    `Revoke ${k.name}`,
  );
}

async function revoke(k: ApiKey): Promise<void> {
  hideError('key-error');
  const res = await client.revokeKey({ params: { projectId: k.projectId, keyId: k.id } });
  if (res.status !== 200) {
    renderKeys();
    return showError('key-error', errorOf(res));
  }
  const revoked = res.body.apiKey;
  keys = keys.map((x) => (x.id === revoked.id ? revoked : x));
  renderKeys();
  text('key-status', `Revoked “${revoked.name}”. It no longer works.`);
}

async function createKey(event: Event): Promise<void> {
  event.preventDefault();
  const name = el<HTMLInputElement>('key-name');
  const type = el<HTMLSelectElement>('key-type').value as ApiKey['type'];
  hideError('key-error');
  text('key-status', '');
  const res = await client.createKey({ params: { projectId }, body: { name: name.value, type } });
  if (res.status !== 201) return showError('key-error', errorOf(res));
  name.value = '';
  keys = [...keys, res.body.apiKey];
  if (type !== 'secret') freshKeys.set(projectId, res.body.key);
  renderKeys();
  reveal(res.body.apiKey.name, res.body.key);
}

async function copy(field: HTMLInputElement | HTMLTextAreaElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(field.value);
    return true;
  } catch {
    // No clipboard API (insecure context, old browser) or no permission: the selection route.
  }
  field.focus();
  field.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  }
}

/** Shows a new key's value once; Dismiss removes it from the page. */
function reveal(name: string, value: string): void {
  const box = node('section', '', 'reveal');
  box.setAttribute('aria-labelledby', 'new-key-title');
  const title = node('h3', `New key “${name}”`);
  title.id = 'new-key-title';
  const warning = node('p', "Copy it now — you won't see it again.", 'warning');
  const label = node('label', 'Key value');
  const field = node('input', '', 'mono');
  field.id = 'new-key-value';
  field.type = 'text';
  field.readOnly = true;
  field.spellcheck = false;
  field.value = value;
  label.append(field);
  const status = node('span', '', 'ok');
  status.id = 'copy-status';
  status.setAttribute('role', 'status');
  const copyButton = button('Copy', 'btn small accent', () => {
    void copy(field).then((ok) => {
      status.textContent = ok ? 'Copied' : 'Press Ctrl+C (⌘C on a Mac) to copy the selected key.';
    });
  });
  const dismiss = button('Dismiss', 'btn small secondary', () => {
    el('new-key').replaceChildren();
    el('key-name').focus();
  });
  const row = node('div', '', 'row');
  row.append(copyButton, ' ', dismiss, ' ', status);
  box.append(title, warning, label, row);
  el('new-key').replaceChildren(box);
  field.focus();
  field.select();
}

// ---- Start ----

async function start(): Promise<void> {
  const [me, month, list] = await Promise.all([client.getAccount(), client.getUsage(), client.listProjects()]);
  el('loading').hidden = true;
  if (me.status !== 200) return showError('load-error', errorOf(me));
  if (month.status !== 200) return showError('load-error', errorOf(month));
  if (list.status !== 200) return showError('load-error', errorOf(list));
  account = me.body.account;
  usage = month.body;
  projects = list.body.projects;
  projectId = projects[0]?.id ?? '';
  showWho(me.body.user.email, () => void signOut());
  renderPlan();
  renderProjects();
  renderInstall();
  for (const id of ['plan-panel', 'projects-panel', 'keys-panel', 'install-panel']) el(id).hidden = false;
  for (const id of ['snippet-html', 'snippet-npm']) {
    el(`copy-${id}`).addEventListener('click', () => {
      void copy(el<HTMLTextAreaElement>(id)).then((ok) => text('install-status', ok ? 'Copied' : 'Press Ctrl+C (⌘C on a Mac) to copy the selected snippet.'));
    });
  }

  el('plan-form').addEventListener('submit', (e) => void switchPlan(e));
  el('project-form').addEventListener('submit', (e) => void createProject(e));
  el('edit-form').addEventListener('submit', (e) => void saveEdit(e));
  el('edit-cancel').addEventListener('click', stopEdit);
  el('key-form').addEventListener('submit', (e) => void createKey(e));
  el('key-project').addEventListener('change', () => {
    projectId = el<HTMLSelectElement>('key-project').value;
    el('new-key').replaceChildren();
    text('key-status', '');
    text('events-project', projects.find((p) => p.id === projectId)?.name ?? '');
    void loadKeys();
    void showIntegrations(projectId);
    showExplorer(projectId);
  });
  startIntegrations();
  startExplorer();
  showExplorer(projectId);
  if (projectId) await Promise.all([loadKeys(), showIntegrations(projectId)]);
}

void start();
