// The account switcher: the current account and the user's role in it; for
// a member of several accounts, a choice of them. Switching makes another
// account the session's current one (PUT /api/session/account) and shows the
// same page again in it, without the project of the previous account.
import type { Role } from '../../../contract/common.js';
import { api } from '../browser/client.js';
import { el, node, text } from '../browser/dom.js';
import { report } from './types.js';

export function accountSwitcher(role: Role): void {
  const select = el<HTMLSelectElement>('account');
  text('account-role', `Your role: ${role}`);
  void (async () => {
    const res = await api.members.listMyAccounts();
    if (res.status !== 200) return report('account-error', res);
    const accounts = res.body.accounts;
    select.replaceChildren(...accounts.map((a) => Object.assign(node('option', `${a.id} (${a.plan}, ${a.role})`), { value: a.id })));
    select.value = accounts.find((a) => a.current)?.id ?? '';
    // One account: its role is all there is to show.
    select.closest('label')!.hidden = accounts.length < 2;
    el('account-choice').hidden = false;
  })();
  select.addEventListener('change', () => {
    void (async () => {
      report('account-error', null);
      select.disabled = true;
      const res = await api.members.switchAccount({ body: { accountId: select.value } });
      select.disabled = false;
      if (res.status !== 200) return report('account-error', res);
      location.assign(location.pathname);
    })();
  });
}
