// Instance, for its administrator: every account with its users and plan
// (assigned here), every plan with its limits, and invitations to sign up
// (the link shown once; revoke).
import type { z } from 'zod';
import type { AdminAccountSchema, InvitationSchema } from '../../../contract/admin.js';
import { api } from '../browser/client.js';
import { button, el, labelCells, node, reveal, text } from '../browser/dom.js';
import { fmt, report, utcDate, utcTime, type Account } from './types.js';

type AdminAccount = z.infer<typeof AdminAccountSchema>;
type Invitation = z.infer<typeof InvitationSchema>;

const PLANS = ['free', 'builder', 'growth', 'scale'] as const satisfies readonly Account['plan'][];
const planLabel = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);

export function instanceView(account: Account): { show(): void } {
  const accountRow = (a: AdminAccount) => {
    const tr = node('tr');
    const users = node('td', a.emails.join(', '), 'text');
    if (a.admin) users.append(' ', node('span', 'administrator', 'badge plain'));
    const plan = node('td');
    const select = node('select');
    select.setAttribute('aria-label', `Plan of ${a.emails[0] ?? a.id}`);
    select.append(...PLANS.map((p) => Object.assign(node('option', planLabel(p)), { value: p })));
    select.value = a.plan;
    select.addEventListener('change', () => {
      void (async () => {
        report('accounts-error', null);
        select.disabled = true;
        const res = await api.admin.setAccountPlan({ params: { accountId: a.id }, body: { plan: select.value as Account['plan'] } });
        select.disabled = false;
        if (res.status !== 200) {
          select.value = a.plan;
          return report('accounts-error', res);
        }
        a.plan = res.body.plan;
        text('accounts-status', `${a.emails[0] ?? a.id} is now on ${planLabel(a.plan)}.`);
      })();
    });
    plan.append(select);
    tr.append(users, node('td', utcDate(a.createdAt), 'nowrap'), plan);
    return tr;
  };

  const loadAccounts = async () => {
    report('accounts-error', null);
    text('accounts-status', 'Loading…');
    const res = await api.admin.listAccounts();
    text('accounts-status', '');
    if (res.status !== 200) return report('accounts-error', res);
    const body = el<HTMLTableSectionElement>('accounts-body');
    body.replaceChildren(...res.body.accounts.map(accountRow));
    labelCells(body);
  };

  const loadPlans = async () => {
    report('plans-error', null);
    const res = await api.account.listPlans();
    if (res.status !== 200) return report('plans-error', res);
    const body = el<HTMLTableSectionElement>('plans-body');
    body.replaceChildren(
      ...res.body.plans.map((p) => {
        const tr = node('tr');
        tr.append(node('td', planLabel(p.name)), node('td', fmt(p.rps)), node('td', fmt(p.monthly)));
        return tr;
      }),
    );
    labelCells(body);
  };

  const invitationRow = (i: Invitation) => {
    const tr = node('tr');
    const actions = node('td');
    if (i.status === 'pending') actions.append(button('Revoke', 'btn small danger', () => void revoke(i), `Revoke the invitation ${i.email ?? 'for anyone'}`));
    tr.append(node('td', i.email ?? 'anyone with the link', 'text'), node('td', i.status), node('td', utcTime(i.expiresAt), 'nowrap'), actions);
    return tr;
  };

  const renderInvitations = (list: readonly Invitation[]) => {
    const body = el<HTMLTableSectionElement>('invitations-body');
    body.replaceChildren(...list.map(invitationRow));
    labelCells(body);
    el('invitations-empty').hidden = list.length > 0;
  };

  const loadInvitations = async () => {
    report('invite-error', null);
    el('invitations-empty').hidden = true;
    const res = await api.admin.listInvitations();
    if (res.status !== 200) return report('invite-error', res);
    renderInvitations(res.body.invitations);
  };

  const revoke = async (i: Invitation) => {
    report('invite-error', null);
    const res = await api.admin.revokeInvitation({ params: { invitationId: i.id } });
    if (res.status !== 200) return report('invite-error', res);
    text('invite-status', `Revoked the invitation ${i.email ?? 'for anyone'}.`);
    await loadInvitations();
  };

  el('invite-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const email = el<HTMLInputElement>('invite-email');
      report('invite-error', null);
      text('invite-status', '');
      const res = await api.admin.createInvitation({ body: email.value.trim() ? { email: email.value.trim() } : {} });
      if (res.status !== 201) return report('invite-error', res);
      email.value = '';
      reveal(el('invite-link'), 'Invitation link', res.body.url, { fieldId: 'invite-link-value' });
      await loadInvitations();
    })();
  });

  return {
    show() {
      el('instance-denied').hidden = account.admin;
      el('accounts-panel').hidden = !account.admin;
      el('plans-panel').hidden = !account.admin;
      el('invitations-panel').hidden = !account.admin;
      el('invite-link').replaceChildren();
      if (account.admin) void Promise.all([loadAccounts(), loadPlans(), loadInvitations()]);
    },
  };
}
