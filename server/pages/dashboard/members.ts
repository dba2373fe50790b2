// Members of the current account: everyone with their role; owners change
// roles and remove members (after a confirmation; the server's 409 for the
// last owner beside the control). Owners and admins invite by email and role
// (the link shown once) and withdraw pending invitations.
import type { z } from 'zod';
import type { Role } from '../../../contract/common.js';
import type { MemberInvitationSchema, MemberSchema } from '../../../contract/members.js';
import { api, type Answer } from '../browser/client.js';
import { button, el, labelCells, node, reveal, text } from '../browser/dom.js';
import { report, utcDate, utcTime } from './types.js';

type Member = z.infer<typeof MemberSchema>;
type MemberInvitation = z.infer<typeof MemberInvitationSchema>;

const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', analyst: 'Analyst', viewer: 'Viewer' };

export interface Session {
  accountId: string;
  userId: string;
  role: Role;
}

export function membersView(session: Session): { show(): void } {
  const owner = session.role === 'owner';
  const account = { accountId: session.accountId };

  const roleSelect = (label: string, roles: readonly Role[], value: Role) => {
    const select = node('select');
    select.setAttribute('aria-label', label);
    select.append(...roles.map((r) => Object.assign(node('option', ROLE_LABELS[r]), { value: r })));
    select.value = value;
    return select;
  };

  const memberRow = (m: Member) => {
    const tr = node('tr');
    const who = node('td', m.email, 'text');
    if (m.name) who.append(node('span', ` (${m.name})`, 'muted'));
    if (m.userId === session.userId) who.append(' ', node('span', 'you', 'badge plain'));
    const roleCell = node('td');
    const actions = node('td');
    const error = node('p', '', 'error');
    error.setAttribute('role', 'alert');
    error.hidden = true;
    error.id = `member-error-${m.userId}`;
    // The server's refusal (409 for the last owner) beside the row's controls.
    const fail = (res: Answer) => report(error.id, res);
    if (owner) {
      const select = roleSelect(`Role of ${m.email}`, ['owner', 'admin', 'analyst', 'viewer'], m.role);
      select.addEventListener('change', () => {
        void (async () => {
          report(error.id, null);
          select.disabled = true;
          const res = await api.members.changeRole({ params: { ...account, userId: m.userId }, body: { role: select.value as Role } });
          select.disabled = false;
          if (res.status !== 200) {
            select.value = m.role;
            return fail(res);
          }
          m.role = res.body.role;
          text('members-status', `${m.email} is now ${ROLE_LABELS[m.role].toLowerCase()}.`);
        })();
      });
      roleCell.append(select);
      const ask = () => {
        const confirm = button('Confirm removal', 'btn small danger', () => void remove());
        const cancel = button('Cancel', 'btn small secondary', () => {
          controls.replaceChildren(removeButton);
          removeButton.focus();
        });
        controls.replaceChildren(confirm, ' ', cancel);
        confirm.focus();
      };
      const remove = async () => {
        report(error.id, null);
        const res = await api.members.removeMember({ params: { ...account, userId: m.userId } });
        if (res.status !== 200) {
          controls.replaceChildren(removeButton);
          return fail(res);
        }
        text('members-status', `Removed ${m.email}.`);
        await load();
      };
      const removeButton = button('Remove', 'btn small danger', ask, `Remove ${m.email}`);
      const controls = node('div', '', 'row');
      controls.append(removeButton);
      actions.append(controls);
    } else roleCell.textContent = ROLE_LABELS[m.role];
    actions.append(error);
    tr.append(who, roleCell, node('td', utcDate(m.joinedAt), 'nowrap'), actions);
    return tr;
  };

  const invitationRow = (i: MemberInvitation) => {
    const tr = node('tr');
    const actions = node('td');
    if (i.status === 'pending') actions.append(button('Withdraw', 'btn small danger', () => void withdraw(i), `Withdraw the invitation for ${i.email}`));
    tr.append(node('td', i.email, 'text'), node('td', ROLE_LABELS[i.role]), node('td', i.status), node('td', utcTime(i.expiresAt), 'nowrap'), actions);
    return tr;
  };

  const load = async () => {
    report('members-error', null);
    const res = await api.members.listMembers({ params: account });
    if (res.status !== 200) return report('members-error', res);
    const body = el<HTMLTableSectionElement>('members-body');
    body.replaceChildren(...res.body.members.map(memberRow));
    labelCells(body);
  };

  const loadInvitations = async () => {
    report('member-invite-error', null);
    const res = await api.members.listMemberInvitations({ params: account });
    if (res.status !== 200) return report('member-invite-error', res);
    const pending = res.body.invitations.filter((i) => i.status === 'pending');
    const body = el<HTMLTableSectionElement>('member-invitations-body');
    body.replaceChildren(...pending.map(invitationRow));
    labelCells(body);
    el('member-invitations-empty').hidden = pending.length > 0;
  };

  const withdraw = async (i: MemberInvitation) => {
    report('member-invite-error', null);
    const res = await api.members.revokeMemberInvitation({ params: { ...account, invitationId: i.id } });
    if (res.status !== 200) return report('member-invite-error', res);
    text('member-invite-status', `Withdrew the invitation for ${i.email}.`);
    await loadInvitations();
  };

  // Admins may invite any role but owner.
  const inviteRole = el<HTMLSelectElement>('member-invite-role');
  const grantable: readonly Role[] = owner ? ['viewer', 'analyst', 'admin', 'owner'] : ['viewer', 'analyst', 'admin'];
  inviteRole.replaceChildren(...grantable.map((r) => Object.assign(node('option', ROLE_LABELS[r]), { value: r })));

  el('member-invite-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const email = el<HTMLInputElement>('member-invite-email');
      report('member-invite-error', null);
      text('member-invite-status', '');
      if (!email.value.trim()) return report('member-invite-error', 'Enter the email address of the person to invite.');
      const res = await api.members.createMemberInvitation({ params: account, body: { email: email.value.trim(), role: inviteRole.value as Role } });
      if (res.status !== 201) return report('member-invite-error', res);
      email.value = '';
      reveal(el('member-invite-link'), `Invitation link for ${res.body.invitation.email}`, res.body.url, { fieldId: 'member-invite-link-value' });
      await loadInvitations();
    })();
  });

  return {
    show() {
      text('members-status', '');
      el('member-invite-link').replaceChildren();
      void Promise.all([load(), loadInvitations()]);
    },
  };
}
