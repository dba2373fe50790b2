// The audit log of the current account (owners and admins): newest first,
// filtered by member, action and time range. The filters live in the
// address, so a link, a reload and Back/Forward show the same entries;
// "Load more" follows the answer's paginationKey with the same filters.
import type { z } from 'zod';
import type { AuditAction, AuditEntrySchema } from '../../../contract/members.js';
import { api } from '../browser/client.js';
import { el, labelCells, node, text } from '../browser/dom.js';
import type { Nav, Route } from './router.js';
import { report, utcSeconds } from './types.js';

type AuditEntry = z.infer<typeof AuditEntrySchema>;

// Every action of the contract, with its label (the Record keeps the list complete).
const ACTIONS: Record<AuditAction, string> = {
  'account.create': 'Account created',
  'auth.login': 'Signed in',
  'auth.login_failed': 'Sign-in failed',
  'member.invite': 'Member invited',
  'member.invitation_revoke': 'Invitation withdrawn',
  'member.join': 'Member joined',
  'member.role': 'Role changed',
  'member.remove': 'Member removed',
  'plan.change': 'Plan changed',
  'project.create': 'Project created',
  'project.update': 'Project edited',
  'key.create': 'Key created',
  'key.revoke': 'Key revoked',
  'event.label': 'Event labeled',
  'ruleset.update': 'Rules changed',
  'list.create': 'List created',
  'list.update': 'List edited',
  'list.delete': 'List deleted',
  'list.entries': 'List entries changed',
  'webhook.create': 'Webhook created',
  'webhook.rotate_secret': 'Webhook secret rotated',
  'webhook.delete': 'Webhook deleted',
  'sealing.key_create': 'Sealing key created',
  'sealing.disable': 'Sealing turned off',
  'linked_id_key.create': 'LinkedId key created',
  'linked_id_key.revoke': 'LinkedId key revoked',
  'proxy.secret_create': 'Proxy secret created',
  'proxy.secret_revoke': 'Proxy secret revoked',
  'visitor.delete': 'Visitor data deleted',
  'event.update': 'Event updated',
  'deviceflow.authorize': 'Command-line tool approved',
  'deviceflow.deny': 'Command-line tool refused',
  'instance.invitation_create': 'Instance invitation created',
  'instance.invitation_revoke': 'Instance invitation revoked',
};

/** datetime-local (read as UTC) ↔ Unix ms in the address. */
const fromInput = (value: string) => (value ? String(Date.parse(`${value}:00Z`)) : '');
const toInput = (ms: string | null) => (ms && /^\d+$/.test(ms) ? new Date(Number(ms)).toISOString().slice(0, 16) : '');

export function auditView(accountId: string, nav: Nav): { show(route: Route): void } {
  const member = el<HTMLSelectElement>('audit-member');
  const action = el<HTMLSelectElement>('audit-action');
  const start = el<HTMLInputElement>('audit-start');
  const end = el<HTMLInputElement>('audit-end');
  action.append(...Object.entries(ACTIONS).map(([value, label]) => Object.assign(node('option', label), { value })));
  let filters: Record<string, string> = {};
  let nextKey: string | undefined;
  let generation = 0;

  const row = (e: AuditEntry) => {
    const tr = node('tr');
    const target = e.target ? `${e.target.type} ${e.target.id}` : '—';
    tr.append(
      node('td', utcSeconds(e.at), 'nowrap'),
      node('td', e.actor.label ?? e.actor.id ?? e.actor.type, 'text'),
      node('td', ACTIONS[e.action] ?? e.action),
      node('td', target, 'mono'),
      node('td', e.ip, 'mono'),
    );
    return tr;
  };

  const load = async (more: boolean) => {
    const mine = ++generation;
    report(more ? 'audit-more-error' : 'audit-error', null);
    if (!more) {
      el('audit-body').replaceChildren();
      el('audit-table').hidden = true;
      el('audit-empty').hidden = true;
      el('audit-more').hidden = true;
      text('audit-status', 'Loading…');
    }
    const res = await api.members.listAudit({ params: { accountId }, query: { ...filters, ...(more && nextKey ? { paginationKey: nextKey } : {}) } });
    if (mine !== generation) return;
    text('audit-status', '');
    if (res.status !== 200) return report(more ? 'audit-more-error' : 'audit-error', res);
    const body = el<HTMLTableSectionElement>('audit-body');
    body.append(...res.body.entries.map(row));
    labelCells(body);
    nextKey = res.body.paginationKey;
    el('audit-table').hidden = body.rows.length === 0;
    el('audit-empty').hidden = body.rows.length > 0;
    el('audit-more').hidden = !nextKey;
  };

  const loadMembers = async () => {
    const res = await api.members.listMembers({ params: { accountId } });
    if (res.status !== 200) return report('audit-error', res);
    const chosen = filters.member ?? '';
    member.replaceChildren(
      Object.assign(node('option', 'anyone'), { value: '' }),
      ...res.body.members.map((m) => Object.assign(node('option', m.email), { value: m.userId })),
    );
    member.value = chosen;
  };

  el('audit-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    const query: Record<string, string> = {};
    if (member.value) query.member = member.value;
    if (action.value) query.action = action.value;
    if (start.value) query.start = fromInput(start.value);
    if (end.value) query.end = fromInput(end.value);
    nav.go(nav.href('audit', query));
  });
  el('audit-clear').addEventListener('click', () => nav.go(nav.href('audit')));
  el('audit-more').addEventListener('click', () => void load(true));
  let membersLoaded = false;

  return {
    show(route) {
      filters = {};
      for (const name of ['member', 'action', 'start', 'end']) {
        const value = route.query.get(name);
        if (value) filters[name] = value;
      }
      member.value = filters.member ?? '';
      action.value = filters.action ?? '';
      start.value = toInput(route.query.get('start'));
      end.value = toInput(route.query.get('end'));
      if (!membersLoaded) {
        membersLoaded = true;
        void loadMembers();
      }
      void load(false);
    },
  };
}
