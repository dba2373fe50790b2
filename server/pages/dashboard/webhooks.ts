// Webhooks of the chosen project: endpoints (add, rotate the secret, remove;
// the signing secret shown once) and each endpoint's delivery log with
// Redeliver.
import type { z } from 'zod';
import type { WebhookDeliverySchema, WebhookEndpointSchema } from '../../../contract/webhooks.js';
import { api } from '../browser/client.js';
import { button, el, labelCells, node, reveal, text } from '../browser/dom.js';
import { report, utcSeconds as when, type Projects } from './types.js';

type Endpoint = z.infer<typeof WebhookEndpointSchema>;
type Delivery = z.infer<typeof WebhookDeliverySchema>;

export function webhooksPanel(projects: Projects): { show(): Promise<void> } {
  const hooks = api.webhooks;
  let projectId = '';
  let endpoints: Endpoint[] = [];
  let shownLog: Endpoint | null = null;

  const secret = (title: string, value: string) => reveal(el('hook-secret'), title, value);

  const load = async () => {
    report('hook-error', null);
    el('hooks-empty').hidden = true;
    el('hooks-body').replaceChildren();
    el('hooks-loading').hidden = false;
    const res = await hooks.listWebhooks({ params: { projectId } });
    el('hooks-loading').hidden = true;
    if (res.status !== 200) return report('hook-error', res);
    endpoints = res.body.endpoints;
    render();
  };

  const render = () => {
    const body = el<HTMLTableSectionElement>('hooks-body');
    body.replaceChildren(
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
    labelCells(body);
    el('hooks-empty').hidden = endpoints.length > 0;
  };

  const add = async () => {
    const url = el<HTMLInputElement>('hook-url');
    report('hook-error', null);
    text('hook-status', '');
    const res = await hooks.createWebhook({ params: { projectId }, body: { url: url.value } });
    if (res.status !== 201) return report('hook-error', res);
    url.value = '';
    endpoints = [...endpoints, res.body.endpoint];
    render();
    secret(`Signing secret of ${res.body.endpoint.url}`, res.body.secret);
  };

  const rotate = async (e: Endpoint) => {
    report('hook-error', null);
    const res = await hooks.rotateWebhookSecret({ params: { projectId, endpointId: e.id }, body: {} });
    if (res.status !== 201) return report('hook-error', res);
    endpoints = endpoints.map((x) => (x.id === e.id ? res.body.endpoint : x));
    render();
    secret(`New signing secret of ${e.url}`, res.body.secret);
  };

  const remove = async (e: Endpoint) => {
    report('hook-error', null);
    const res = await hooks.deleteWebhook({ params: { projectId, endpointId: e.id } });
    if (res.status !== 200) return report('hook-error', res);
    endpoints = endpoints.filter((x) => x.id !== e.id);
    if (shownLog?.id === e.id) el('deliveries').hidden = true;
    render();
    text('hook-status', `Removed ${e.url}.`);
  };

  const showLog = async (e: Endpoint) => {
    shownLog = e;
    const res = await hooks.listDeliveries({ params: { projectId, endpointId: e.id } });
    if (res.status !== 200) return report('hook-error', res);
    text('deliveries-title', `Deliveries to ${e.url}`);
    renderLog(e, res.body.deliveries);
    el('deliveries').hidden = false;
  };

  const renderLog = (e: Endpoint, deliveries: Delivery[]) => {
    const body = el<HTMLTableSectionElement>('deliveries-body');
    body.replaceChildren(
      ...deliveries.map((d) => {
        const tr = node('tr');
        const last = d.lastStatus !== null ? `HTTP ${d.lastStatus}` : (d.lastError ?? '—');
        const actions = node('td');
        actions.append(button('Redeliver', 'btn small secondary', () => void redeliver(e, d), `Redeliver ${d.requestId}`));
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
    labelCells(body);
    el('deliveries-empty').hidden = deliveries.length > 0;
  };

  const redeliver = async (e: Endpoint, d: Delivery) => {
    const res = await hooks.redeliver({ params: { projectId, endpointId: e.id, requestId: d.requestId }, body: {} });
    if (res.status !== 202) return report('hook-error', res);
    text('hook-status', `Redelivering ${d.requestId}.`);
    await showLog(e);
  };

  el('hook-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void add();
  });

  return {
    /** Shows the chosen project's endpoints; called again when another is chosen. */
    async show() {
      projectId = projects.current()?.id ?? '';
      shownLog = null;
      el('deliveries').hidden = true;
      el('hook-secret').replaceChildren();
      text('hook-status', '');
      if (projectId) await load();
    },
  };
}
