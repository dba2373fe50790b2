// The consent page script. Everything from the server is set with
// textContent, so a hostile client name is shown, never interpreted.
import type { z } from 'zod';
import type { GrantAccountSchema, GrantViewSchema } from '../../../contract/deviceflow.js';
import { api, errorBody, errorText, retryAfter, toLogin, type Answer } from '../browser/client.js';
import { el, problem as alert, showOnly, text } from '../browser/dom.js';
import { showSignedIn } from '../browser/session.js';

type GrantView = z.infer<typeof GrantViewSchema>;
type GrantAccount = z.infer<typeof GrantAccountSchema>;
type Decision = Awaited<ReturnType<typeof grants.authorizeGrant | typeof grants.denyGrant>>;

const SECTIONS = ['loading', 'enter', 'problem', 'consent', 'done'] as const;
type Section = (typeof SECTIONS)[number];
const show = (s: Section) => showOnly(SECTIONS, s);

const grants = api.deviceFlow;

const code = (new URLSearchParams(location.search).get('code') ?? '').trim();
// ts-rest puts path parameters in as they are: the code is typed by people.
const params = { userCode: encodeURIComponent(code) };

function problem(result: Answer): void {
  if (result.status === 401) return toLogin();
  const titles: Record<number, string> = {
    404: 'Unknown code',
    409: 'Already decided',
    410: 'This code can no longer be used',
    429: 'Too many attempts',
  };
  text('problem-title', titles[result.status] ?? 'Something went wrong');
  let message = errorText(result);
  const wait = retryAfter(result);
  if (result.status === 429 && wait) message += ` (wait about ${Math.ceil(wait / 60)} min).`;
  text('problem-text', message);
  show('problem');
}

function finished(grant: GrantView): void {
  const name = grant.clientName;
  if (grant.status === 'denied') {
    text('done-title', 'Request denied');
    text('done-text', `No key was created. “${name}” has been told to stop; you can close this page.`);
  } else if (grant.status === 'consumed') {
    text('done-title', 'Approved');
    text('done-text', `“${name}” has received its key “${grant.keyName}”. Return to your terminal; you can close this page.`);
  } else {
    text('done-title', 'Approved');
    text('done-text', `“${name}” will receive its key “${grant.keyName}” at its next check. Return to your terminal; you can close this page.`);
  }
  show('done');
}

/** "(3 minutes ago)"; nothing when the browser's clock disagrees with the server's. */
function ago(iso: string): string {
  const minutes = Math.round((Date.now() - Date.parse(iso)) / 60_000);
  if (minutes < 0 || minutes > 15) return '';
  if (minutes < 1) return '(just now)';
  return minutes === 1 ? '(1 minute ago)' : `(${minutes} minutes ago)`;
}

const option = (value: string, label: string) => Object.assign(document.createElement('option'), { value, textContent: label });

/**
 * The account and project the key is created in: the accounts are those
 * where the user may create keys (the server lists only those, and checks
 * the role again on approval), the choice shown only when there are several.
 */
function chooser(accounts: GrantAccount[], changed: () => void): HTMLSelectElement {
  const account = el<HTMLSelectElement>('account');
  const project = el<HTMLSelectElement>('project');
  account.replaceChildren(...accounts.map((a) => option(a.id, `${a.id} (${a.role})`)));
  account.value = (accounts.find((a) => a.current) ?? accounts[0])?.id ?? '';
  el('account-choice').hidden = accounts.length < 2;
  el('project-choice').hidden = accounts.length === 0;
  el('no-account').hidden = accounts.length > 0;
  const fill = () => {
    const projects = accounts.find((a) => a.id === account.value)?.projects ?? [];
    project.replaceChildren(...projects.map((p) => option(p.id, p.name)));
    changed();
  };
  account.addEventListener('change', fill);
  project.addEventListener('change', changed);
  fill();
  return account;
}

function consent(grant: GrantView, accounts: GrantAccount[]): void {
  text('client-name', grant.clientName);
  text('user-code', grant.userCode);
  text('request-ip', grant.requestIp);
  text('request-ua', grant.requestUserAgent ?? 'unknown client');
  text('request-time', new Date(grant.requestedAt).toLocaleString());
  text('request-ago', ago(grant.requestedAt));
  text('expires', new Date(grant.expiresAt).toLocaleTimeString());
  text('key-name', grant.keyName);
  const confirm = el<HTMLInputElement>('confirm');
  const approve = el<HTMLButtonElement>('approve');
  const deny = el<HTMLButtonElement>('deny');
  const project = el<HTMLSelectElement>('project');
  const sync = () => {
    approve.disabled = !confirm.checked || project.value === '';
  };
  const account = chooser(accounts, sync);
  confirm.addEventListener('change', sync);

  const decide = async (call: () => Promise<Decision>) => {
    approve.disabled = deny.disabled = true;
    alert('consent-error', null);
    const decision = await call();
    if (decision.status === 200) return finished(decision.body);
    const res: Answer = decision;
    deny.disabled = false;
    sync();
    // Refusals of this decision (role, account, project) stay beside its buttons; an unusable code replaces the form.
    const refusal = errorBody(res)?.code;
    if (res.status === 403 || refusal === 'project_not_found' || refusal === 'account_not_found' || res.status === 0 || res.status >= 500) {
      return alert('consent-error', res);
    }
    problem(res);
  };
  el('consent-form').addEventListener('submit', (event) => {
    event.preventDefault();
    if (!confirm.checked) return;
    void decide(() => grants.authorizeGrant({ params, body: { accountId: account.value, projectId: project.value } }));
  });
  deny.addEventListener('click', () => void decide(() => grants.denyGrant({ params, body: {} })));
  show('consent');
  confirm.focus();
}

async function start(): Promise<void> {
  void showSignedIn();
  if (!code) {
    show('enter');
    el<HTMLInputElement>('enter-code').focus();
    return;
  }
  const [grant, accounts] = await Promise.all([grants.getGrant({ params }), grants.listGrantAccounts()]);
  if (grant.status !== 200) return problem(grant);
  if (grant.body.status !== 'pending') return finished(grant.body);
  if (accounts.status !== 200) return problem(accounts);
  consent(grant.body, accounts.body.accounts);
}

void start();
