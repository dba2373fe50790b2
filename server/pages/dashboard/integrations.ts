// The dashboard's "Webhooks and sealed results" panel, for the project
// chosen under API keys: webhook endpoints (add, rotate the secret, remove),
// each endpoint's delivery log with redeliver, and sealed results (turn on
// or rotate the key, turn off). Secrets are shown once, as text. Calls go
// through the ts-rest clients of contract/webhooks.ts and contract/sealing.ts.
import type { z } from 'zod';
import type { WebhookDeliverySchema, WebhookEndpointSchema } from '../../../contract/webhooks.js';
import { api, errorText } from '../browser/client.js';
import { el, text } from '../browser/dom.js';

type Endpoint = z.infer<typeof WebhookEndpointSchema>;
type Delivery = z.infer<typeof WebhookDeliverySchema>;

const hooks = api.webhooks;
const sealing = api.sealing;

let projectId = '';
let endpoints: Endpoint[] = [];
let shownLog: Endpoint | null = null;

const when = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '—');

function node<K extends keyof HTMLElementTagNameMap>(tag: K, content = '', className = ''): HTMLElementTagNameMap[K] {
  const n = document.createElement(tag);
  if (content) n.textContent = content;
  if (className) n.className = className;
  return n;
}

function button(label: string, className: string, onClick: () => void, ariaLabel?: string): HTMLButtonElement {
  const b = node('button', label, className);
  b.type = 'button';
  if (ariaLabel) b.setAttribute('aria-label', ariaLabel);
  b.addEventListener('click', onClick);
  return b;
}

function problem(id: string, res: { status: number; body: unknown } | null): void {
  const p = el(id);
  p.hidden = res === null;
  p.textContent = res === null ? '' : errorText(res);
}

/** A secret shown once, with Copy and Dismiss. */
function reveal(containerId: string, title: string, value: string): void {
  const box = node('section', '', 'reveal');
  const field = node('input', '', 'mono');
  field.type = 'text';
  field.readOnly = true;
  field.spellcheck = false;
  field.value = value;
  field.setAttribute('aria-label', title);
  const status = node('span', '', 'ok');
  status.setAttribute('role', 'status');
  const copy = button('Copy', 'btn small accent', () => {
    void navigator.clipboard
      .writeText(value)
      .then(() => (status.textContent = 'Copied'))
      .catch(() => {
        field.select();
        status.textContent = 'Press Ctrl+C (⌘C on a Mac) to copy the selected value.';
      });
  });
  const dismiss = button('Dismiss', 'btn small secondary', () => el(containerId).replaceChildren());
  const row = node('div', '', 'row');
  row.append(copy, ' ', dismiss, ' ', status);
  box.append(node('h3', title), node('p', "Copy it now — you won't see it again.", 'warning'), field, row);
  el(containerId).replaceChildren(box);
  field.focus();
  field.select();
}

// ---- Webhooks ----

async function loadEndpoints(): Promise<void> {
  problem('hook-error', null);
  const res = await hooks.listWebhooks({ params: { projectId } });
  if (res.status !== 200) return problem('hook-error', res);
  endpoints = res.body.endpoints;
  renderEndpoints();
}

function renderEndpoints(): void {
  el('hooks-body').replaceChildren(
    ...endpoints.map((e) => {
      const tr = node('tr');
      const actions = node('td', '', 'nowrap');
      actions.append(
        button('Deliveries', 'btn small secondary', () => void showLog(e), `Deliveries of ${e.url}`),
        ' ',
        button('Rotate secret', 'btn small secondary', () => void rotate(e), `Rotate the secret of ${e.url}`),
        ' ',
        button('Remove', 'btn small danger', () => void remove(e), `Remove ${e.url}`),
      );
      tr.append(node('td', e.url, 'text'), node('td', `…${e.secretHint}`, 'mono nowrap'), node('td', when(e.createdAt), 'nowrap'), actions);
      return tr;
    }),
  );
  el('hooks-empty').hidden = endpoints.length > 0;
}

async function addEndpoint(event: Event): Promise<void> {
  event.preventDefault();
  const url = el<HTMLInputElement>('hook-url');
  problem('hook-error', null);
  text('hook-status', '');
  const res = await hooks.createWebhook({ params: { projectId }, body: { url: url.value } });
  if (res.status !== 201) return problem('hook-error', res);
  url.value = '';
  endpoints = [...endpoints, res.body.endpoint];
  renderEndpoints();
  reveal('hook-secret', `Signing secret of ${res.body.endpoint.url}`, res.body.secret);
}

async function rotate(e: Endpoint): Promise<void> {
  problem('hook-error', null);
  const res = await hooks.rotateWebhookSecret({ params: { projectId, endpointId: e.id }, body: {} });
  if (res.status !== 201) return problem('hook-error', res);
  endpoints = endpoints.map((x) => (x.id === e.id ? res.body.endpoint : x));
  renderEndpoints();
  reveal('hook-secret', `New signing secret of ${e.url}`, res.body.secret);
}

async function remove(e: Endpoint): Promise<void> {
  problem('hook-error', null);
  const res = await hooks.deleteWebhook({ params: { projectId, endpointId: e.id } });
  if (res.status !== 200) return problem('hook-error', res);
  endpoints = endpoints.filter((x) => x.id !== e.id);
  if (shownLog?.id === e.id) el('deliveries').hidden = true;
  renderEndpoints();
  text('hook-status', `Removed ${e.url}.`);
}

async function showLog(e: Endpoint): Promise<void> {
  shownLog = e;
  const res = await hooks.listDeliveries({ params: { projectId, endpointId: e.id } });
  if (res.status !== 200) return problem('hook-error', res);
  text('deliveries-title', `Deliveries to ${e.url}`);
  renderLog(e, res.body.deliveries);
  el('deliveries').hidden = false;
}

function renderLog(e: Endpoint, deliveries: Delivery[]): void {
  el('deliveries-body').replaceChildren(
    ...deliveries.map((d) => {
      const tr = node('tr');
      const last = d.lastStatus !== null ? `HTTP ${d.lastStatus}` : (d.lastError ?? '—');
      const again = button('Redeliver', 'btn small secondary', () => void redeliver(e, d), `Redeliver ${d.requestId}`);
      const actions = node('td');
      actions.append(again);
      tr.append(
        node('td', d.requestId, 'mono'),
        node('td', d.status, d.status === 'failed' ? 'revoked' : ''),
        node('td', String(d.attempts)),
        node('td', last, 'text'),
        node('td', when(d.nextAttemptAt), 'nowrap'),
        actions,
      );
      if (d.lastError && d.lastStatus !== null) tr.title = d.lastError;
      return tr;
    }),
  );
  el('deliveries-empty').hidden = deliveries.length > 0;
}

async function redeliver(e: Endpoint, d: Delivery): Promise<void> {
  const res = await hooks.redeliver({ params: { projectId, endpointId: e.id, requestId: d.requestId }, body: {} });
  if (res.status !== 202) return problem('hook-error', res);
  text('hook-status', `Redelivering ${d.requestId}.`);
  await showLog(e);
}

// ---- Sealed results ----

function renderSealing(state: { enabled: boolean; since: string | null }): void {
  text(
    'sealing-state',
    state.enabled
      ? `On since ${when(state.since)}: identify answers {sealedResult}; open it on your backend with unseal(blob, key).`
      : 'Off: identify answers the plain compact result.',
  );
  el('sealing-key').textContent = state.enabled ? 'Rotate key' : 'Turn on';
  el('sealing-off').hidden = !state.enabled;
}

async function loadSealing(): Promise<void> {
  problem('sealing-error', null);
  const res = await sealing.getSealing({ params: { projectId } });
  if (res.status !== 200) return problem('sealing-error', res);
  renderSealing(res.body);
}

async function newSealingKey(): Promise<void> {
  problem('sealing-error', null);
  const res = await sealing.createSealingKey({ params: { projectId }, body: {} });
  if (res.status !== 201) return problem('sealing-error', res);
  renderSealing(res.body);
  reveal('sealing-secret', 'Sealing key (AES-256, base64)', res.body.key);
}

async function sealingOff(): Promise<void> {
  problem('sealing-error', null);
  const res = await sealing.disableSealing({ params: { projectId } });
  if (res.status !== 200) return problem('sealing-error', res);
  el('sealing-secret').replaceChildren();
  renderSealing(res.body);
}

/** Shows the panel for a project; called again when another project is chosen. */
export async function showIntegrations(project: string): Promise<void> {
  projectId = project;
  shownLog = null;
  el('deliveries').hidden = true;
  el('hook-secret').replaceChildren();
  el('sealing-secret').replaceChildren();
  text('hook-status', '');
  el('integrations-panel').hidden = !project;
  if (project) await Promise.all([loadEndpoints(), loadSealing()]);
}

export function startIntegrations(): void {
  el('hook-form').addEventListener('submit', (e) => void addEndpoint(e));
  el('sealing-key').addEventListener('click', () => void newSealingKey());
  el('sealing-off').addEventListener('click', () => void sealingOff());
}
