// API keys of the chosen project: the list (type, hint, source, status,
// dates, age with a rotation badge), creating one (its value shown once) and
// revoking one in two steps.
import { api } from '../browser/client.js';
import { button, el, labelCells, node, reveal, text } from '../browser/dom.js';
import type { Install } from './install.js';
import { fmt, report, utcDate, utcTime, type ApiKey, type Projects } from './types.js';

const ROTATE_AFTER_DAYS = 90;
const DAY_MS = 86_400_000;

const ageDays = (k: ApiKey) => Math.max(0, Math.floor((Date.now() - Date.parse(k.createdAt)) / DAY_MS));

export function keysView(projects: Projects, install: Install): { show(): void } {
  let keys: ApiKey[] = [];

  const render = () => {
    const body = el<HTMLTableSectionElement>('keys-body');
    body.replaceChildren(...keys.map(row));
    labelCells(body);
    el('keys-empty').hidden = keys.length > 0;
  };

  const row = (k: ApiKey) => {
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
  };

  /** Revoking takes two steps in place: Revoke, then Confirm revoke (or Cancel). */
  const revokeButton = (k: ApiKey, cell: HTMLElement): HTMLButtonElement =>
    button(
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

  const revoke = async (k: ApiKey) => {
    report('key-error', null);
    const res = await api.account.revokeKey({ params: { projectId: k.projectId, keyId: k.id } });
    if (res.status !== 200) {
      render();
      return report('key-error', res);
    }
    const revoked = res.body.apiKey;
    keys = keys.map((x) => (x.id === revoked.id ? revoked : x));
    render();
    text('key-status', `Revoked “${revoked.name}”. It no longer works.`);
  };

  const load = async () => {
    const projectId = projects.current()?.id;
    el('new-key').replaceChildren();
    text('key-status', '');
    report('key-error', null);
    if (!projectId) return;
    el('keys-empty').hidden = true;
    el('keys-body').replaceChildren();
    el('keys-loading').hidden = false;
    const res = await api.account.listKeys({ params: { projectId } });
    if (projectId !== projects.current()?.id) return;
    el('keys-loading').hidden = true;
    if (res.status !== 200) return report('key-error', res);
    keys = res.body.keys;
    render();
  };

  el('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const projectId = projects.current()?.id;
      if (!projectId) return;
      const name = el<HTMLInputElement>('key-name');
      const type = el<HTMLSelectElement>('key-type').value as ApiKey['type'];
      report('key-error', null);
      text('key-status', '');
      const res = await api.account.createKey({ params: { projectId }, body: { name: name.value, type } });
      if (res.status !== 201) return report('key-error', res);
      name.value = '';
      keys = [...keys, res.body.apiKey];
      if (type !== 'secret') install.fresh(projectId, res.body.key);
      render();
      reveal(el('new-key'), `New key “${res.body.apiKey.name}”`, res.body.key, {
        fieldId: 'new-key-value',
        statusId: 'copy-status',
        dismissed: () => el('key-name').focus(),
      });
    })();
  });
  return { show: () => void load() };
}
