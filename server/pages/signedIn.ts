// A page for signed-in users only: without a valid session, 303 to
// /login?next=<this page>, which comes back here after sign-in.
import type { RequestHandler } from 'express';
import { SESSION_COOKIE, type AccountsService } from '../accounts/service.js';
import { asyncHandler } from '../http/asyncHandler.js';
import { readCookie } from '../http/cookies.js';

export function signedInPage(accounts: AccountsService, html: string): RequestHandler {
  return asyncHandler(async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (!(await accounts.sessionFromCookie(readCookie(req, SESSION_COOKIE)))) {
      // originalUrl is this route's own path and query: always same-origin.
      res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
      return;
    }
    res.type('html').send(html);
  });
}
