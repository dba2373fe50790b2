// GET /login?next=<same-origin path>: a minimal sign-in / sign-up page for
// the service's own pages (the CLI consent page sends people here). It calls
// the dashboard API (/api/auth/login, /api/auth/signup) and then goes to
// `next`, or to /dashboard without one. Already signed in: straight to `next`.
// An account's invitation (?invite=dij_…) is accepted with the sign-up or
// sign-in, or, for someone already signed in, with one button. Its buttons
// stay disabled until the script has taken them: clicked sooner, "Create
// one" did nothing and a sign-up went off as a sign-in.
import type { RequestHandler } from 'express';
import { SESSION_COOKIE, type AccountsService } from '../../accounts/service.js';
import { pageHtml } from '../html.js';
import { safeNext } from '../next.js';
import { asyncHandler } from '../../http/asyncHandler.js';
import { readCookie } from '../../http/cookies.js';

const BODY = `<main>
<section class="panel" id="login">
  <h1 id="title">Sign in</h1>
  <p id="context" class="muted" hidden>You need an account to <span id="next-path"></span>.</p>
  <form id="form" novalidate>
    <label>Email <input type="email" id="email" name="email" autocomplete="username" required maxlength="254"></label>
    <label>Password <input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1024"></label>
    <label id="name-row" hidden>Name (optional) <input type="text" id="name" name="name" autocomplete="name" maxlength="100"></label>
    <p id="error" class="error" role="alert" hidden></p>
    <button type="submit" id="submit" class="btn primary" disabled>Sign in</button>
  </form>
  <div id="join" hidden>
    <p>You are signed in as <strong id="join-email"></strong>. Join the account you were invited to with this address, or sign in with another below.</p>
    <button type="button" id="join-submit" class="btn primary">Join the account</button>
    <p id="join-error" class="error" role="alert" hidden></p>
  </div>
  <p class="muted" id="toggle-row"><span id="toggle-text">No account yet?</span> <button type="button" id="toggle" class="link" disabled>Create one</button></p>
</section>
</main>`;

export function loginPage(accounts: AccountsService, baseUrl: string): RequestHandler {
  const origin = new URL(baseUrl).origin;
  const html = pageHtml({ title: 'Sign in · deviceid', script: 'login.js', body: BODY });
  return asyncHandler(async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const target = safeNext(typeof req.query.next === 'string' ? req.query.next : null, origin);
    if (target && (await accounts.sessionFromCookie(readCookie(req, SESSION_COOKIE)))) {
      res.redirect(303, target);
      return;
    }
    res.type('html').send(html);
  });
}
