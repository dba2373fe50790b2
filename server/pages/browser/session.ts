// The header's "Signed in as … Sign out", through the account client.
import { api, type Answer } from './client.js';
import { el } from './dom.js';

/** Signs out; `then` runs after the session is gone (or had already expired), `failed` otherwise. */
export async function signOut(then: () => void, failed: (res: Answer) => void): Promise<void> {
  // The route has no body, but the CSRF check wants every cookie-authenticated POST to be JSON.
  const res = await api.account.logout({ extraHeaders: { 'content-type': 'application/json' } });
  if (res.status === 204 || res.status === 401) then();
  else failed(res);
}

export function showWho(email: string, onSignOut: () => void): void {
  const who = el('who');
  const name = document.createElement('span');
  name.textContent = `Signed in as ${email}`;
  const out = document.createElement('button');
  out.type = 'button';
  out.className = 'link';
  out.textContent = 'Sign out';
  out.addEventListener('click', onSignOut);
  who.replaceChildren(name, ' ', out);
  who.hidden = false;
}

/** Shows who is signed in (if anyone); Sign out reloads the page. */
export async function showSignedIn(): Promise<{ email: string } | null> {
  const me = await api.account.getAccount();
  if (me.status !== 200) return null;
  const reload = () => location.reload();
  showWho(me.body.user.email, () => void signOut(reload, reload));
  return { email: me.body.user.email };
}
