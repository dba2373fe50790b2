// GET /cli/auth?code=<user code>: the consent page of the device code flow.
// Not signed in → /login?next=<this page> (same origin), then back here.
// The page is static markup; its script reads the grant through
// GET /api/cli/grants/:userCode and the accounts the user may approve in
// (GET /api/cli/accounts; a choice only when there are several), and decides
// through the authorize / deny endpoints (session cookie, CSRF-checked).
// This GET never changes anything.
import type { RequestHandler } from 'express';
import type { AccountsService } from '../../accounts/service.js';
import { pageHtml } from '../html.js';
import { signedInPage } from '../signedIn.js';

const BODY = `<main>
<section class="panel" id="loading"><p class="muted">Loading…</p></section>

<section class="panel" id="enter" hidden>
  <h1>Connect a command-line tool</h1>
  <p>Enter the code shown in your terminal.</p>
  <form id="enter-form" class="code-entry" method="get" action="/cli/auth">
    <label>Code <input type="text" id="enter-code" name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" placeholder="XXXX-XXXX" required></label>
    <button type="submit" class="btn primary">Continue</button>
  </form>
</section>

<section class="panel" id="problem" hidden role="alert">
  <h1 id="problem-title">This code cannot be used</h1>
  <p id="problem-text"></p>
  <p><a href="/cli/auth">Enter a different code</a></p>
</section>

<section class="panel" id="consent" hidden>
  <h1>A command-line tool is asking for an API key</h1>
  <p class="warning">Continue only if you started this yourself, just now, in your own terminal. If you did not, or are unsure, deny.</p>
  <dl>
    <dt>Tool</dt>
    <dd><span id="client-name" class="client-name"></span><span class="tag">name chosen by the tool, not verified</span></dd>
    <dt>Code</dt>
    <dd><span id="user-code" class="code"></span><br><span class="muted">Check that this is exactly the code in your terminal.</span></dd>
    <dt>Requested from</dt>
    <dd>IP <span id="request-ip"></span><br><span id="request-ua" class="muted"></span></dd>
    <dt>Requested at</dt>
    <dd><span id="request-time"></span> <span id="request-ago" class="muted"></span></dd>
    <dt>Expires</dt>
    <dd id="expires"></dd>
  </dl>
  <form id="consent-form" novalidate>
    <label id="account-choice" hidden>Account <select id="account" name="account" required></select></label>
    <label id="project-choice">Project <select id="project" name="project" required></select></label>
    <p id="no-account" class="error" hidden>Your role does not allow creating API keys in any of your accounts (admin or owner needed). Ask an owner of the account to approve, or deny.</p>
    <p>Approving creates a <strong>live</strong> API key named <strong id="key-name" class="client-name"></strong> in this project and hands it to the tool once. You can revoke it in the dashboard at any time.</p>
    <label class="confirm"><input type="checkbox" id="confirm"> <span>The code above matches the code in my terminal</span></label>
    <p id="consent-error" class="error" role="alert" hidden></p>
    <div class="actions">
      <button type="submit" id="approve" class="btn approve" disabled>Approve</button>
      <button type="button" id="deny" class="btn deny">Deny</button>
    </div>
  </form>
</section>

<section class="panel" id="done" hidden>
  <h1 id="done-title"></h1>
  <p id="done-text"></p>
</section>
</main>`;

export const consentPage = (accounts: AccountsService): RequestHandler =>
  signedInPage(accounts, pageHtml({ title: 'Approve a command-line tool · deviceid', script: 'cli-consent.js', body: BODY }));
