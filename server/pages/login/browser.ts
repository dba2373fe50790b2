// The login page script: sign in or create an account through the dashboard
// API, then continue to `next` (same-origin paths only), else the dashboard.
// An invitation link (`?invite=<token>`) opens the sign-up form and sends the
// token with it; an account's invitation (dij_…) goes with a sign-in too, and
// someone already signed in accepts it with one button (POST
// /api/invitations/accept). Each lands on the dashboard in the account joined.
import { api, errorText } from '../browser/client.js';
import { el, text } from '../browser/dom.js';
import { safeNext } from '../next.js';

const params = new URLSearchParams(location.search);
const next = safeNext(params.get('next'), location.origin);
const invitation = params.get('invite');
/** An invitation to an existing account (not the administrator's invitation to create one). */
const joining = invitation?.startsWith('dij_') ? invitation : null;
let mode: 'login' | 'signup' = invitation ? 'signup' : 'login';

function render(): void {
  const signup = mode === 'signup';
  text('title', signup ? 'Create an account' : 'Sign in');
  text('submit', signup ? 'Create account' : 'Sign in');
  text('toggle-text', signup ? 'Already have an account?' : 'No account yet?');
  text('toggle', signup ? 'Sign in' : 'Create one');
  el('name-row').hidden = !signup;
  el<HTMLInputElement>('password').autocomplete = signup ? 'new-password' : 'current-password';
  el('error').hidden = true;
}

function fail(message: string): void {
  text('error', message);
  el('error').hidden = false;
}

async function submit(event: Event): Promise<void> {
  event.preventDefault();
  const email = el<HTMLInputElement>('email').value.trim();
  const password = el<HTMLInputElement>('password').value;
  if (!email || !password) return fail('Enter your email and password.');
  if (mode === 'signup' && password.length < 10) return fail('Choose a password of at least 10 characters.');
  const button = el<HTMLButtonElement>('submit');
  button.disabled = true;
  try {
    const name = el<HTMLInputElement>('name').value.trim();
    const res =
      mode === 'signup'
        ? await api.account.signup({ body: { email, password, ...(name ? { name } : {}), ...(invitation ? { invitation } : {}) } })
        : await api.account.login({ body: { email, password, ...(joining ? { invitation: joining } : {}) } });
    if (res.status === 200 || res.status === 201) {
      location.assign(next ?? '/dashboard');
      return;
    }
    fail(errorText(res));
  } finally {
    button.disabled = false;
  }
}

function start(): void {
  if (next) {
    const purpose = next.startsWith('/cli/auth') ? 'approve a command-line tool' : next.startsWith('/dashboard') ? 'open the dashboard' : `continue to ${next}`;
    text('next-path', purpose);
    el('context').hidden = false;
  }
  el('form').addEventListener('submit', (e) => void submit(e));
  el('toggle').addEventListener('click', () => {
    mode = mode === 'login' ? 'signup' : 'login';
    render();
  });
  render();
  el<HTMLButtonElement>('submit').disabled = false;
  el<HTMLButtonElement>('toggle').disabled = false;
  if (joining) void offerJoin(joining);
}

async function offerJoin(token: string): Promise<void> {
  const me = await api.account.getAccount();
  if (me.status !== 200) return;
  text('join-email', me.body.user.email);
  el('join').hidden = false;
  const button = el<HTMLButtonElement>('join-submit');
  button.addEventListener('click', () => {
    void (async () => {
      button.disabled = true;
      const res = await api.members.acceptInvitation({ body: { invitation: token } });
      button.disabled = false;
      if (res.status === 200) return location.assign(next ?? '/dashboard');
      text('join-error', errorText(res));
      el('join-error').hidden = false;
    })();
  });
}

start();
