// What authentication attaches to a request.
import type { Session } from '../accounts/service.js';
import type { ProxiedRequest } from '../proxy/service.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { MemberDoc } from '../store/members.js';

export interface AuthContext {
  apiKey?: ApiKeyDoc;
  session?: Session;
  /** Session routes: the member's role in the account the route acts on, read on this request. */
  member?: MemberDoc;
  /** Set on routes declared `proxy: true` when a valid proxy secret came with the request. */
  proxy?: ProxiedRequest;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: AuthContext;
    }
  }
}

/** The session of a route declared `auth: 'session'` (the middleware guarantees it). */
export function sessionOf(req: Express.Request): Session {
  const s = req.auth?.session;
  if (!s) throw new Error('session route reached without a session');
  return s;
}

/** The key of a route declared with key auth (the middleware guarantees it). */
export function apiKeyOf(req: Express.Request): ApiKeyDoc {
  const k = req.auth?.apiKey;
  if (!k) throw new Error('key route reached without a key');
  return k;
}

/** The membership of a session route's account (the middleware guarantees it). */
export function memberOf(req: Express.Request): MemberDoc {
  const m = req.auth?.member;
  if (!m) throw new Error('session route reached without a membership');
  return m;
}
