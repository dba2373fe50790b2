// A page for signed-in users only: without a valid session, 303 to
// /login?next=<this page>, which comes back here after sign-in.
import type { RequestHandler } from 'express';
import { SESSION_COOKIE, type AccountsService } from '../accounts/service.js';

export function signedInPage(accounts: AccountsService, html: string): RequestHandler {
  return async (req, res, next) => {
    try {
      res.setHeader('Cache-Control', 'no-store');
      if (!(await accounts.sessionFromCookie(req.cookies?.[SESSION_COOKIE]))) {
        // originalUrl is this route's own path and query: always same-origin.
        res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
        return;
      }
      res.type('html').send(html);
    } catch (err) {
      next(err);
    }
  };
}
