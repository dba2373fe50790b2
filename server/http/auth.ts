// One middleware enforces the `auth`, `role` (and `csrf`) declared in each
// route's metadata. It runs before ts-rest validates the request, so a bad key
// is 401 even when the body is also invalid. Session routes read the member's
// role from the database on every request (never cached), so removing a member
// or lowering a role holds on their very next request in every process. It
// also names the request's actor for the audit log (audit/context.ts).
import type { NextFunction, Request, Response } from 'express';
import type { RouteMeta } from '../../contract/common.js';
import { roleAllows } from '../accounts/access.js';
import { SESSION_COOKIE, type AccountsService, type Session } from '../accounts/service.js';
import { ANONYMOUS, withActor, type RequestActor } from '../audit/context.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { authenticateKey } from '../keys/authenticate.js';
import type { ProxyService } from '../proxy/service.js';
import type { Store } from '../store/index.js';
import './context.js';
import { readCookie } from './cookies.js';

type TsRestRequest = Request & { tsRestRoute?: { metadata?: unknown } };

function bearer(req: Request): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v.trim() : undefined;
}

/** The key of a server-side route: `Authorization: Bearer <key>`, else `X-API-Key` (either works on every such route). */
function serverKey(req: Request): string | undefined {
  return bearer(req) ?? header(req, 'x-api-key');
}

/**
 * The account a route declared `accountInBody` names. Read before validation:
 * anything but a string is left to the route's schema to refuse (400), while
 * the role is checked in the current account.
 */
function bodyAccountId(req: Request): string | undefined {
  const v = (req.body as { accountId?: unknown } | undefined)?.accountId;
  return typeof v === 'string' ? v : undefined;
}

/**
 * CSRF for cookie-authenticated state changes: the request must be JSON (a
 * cross-site form cannot send that without a CORS preflight we never grant)
 * and its Origin, or else Referer, must be our own origin.
 */
function checkCsrf(req: Request, ownOrigin: string): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return;
  const hasBody = req.method !== 'DELETE';
  if (hasBody && !req.is('application/json')) throw new ApiError('unsupported_media_type');
  const origin = header(req, 'origin');
  let source: string | undefined = origin;
  if (!source) {
    const referer = header(req, 'referer');
    try {
      source = referer ? new URL(referer).origin : undefined;
    } catch {
      source = undefined;
    }
  }
  if (source !== ownOrigin) throw new ApiError('cross_site_request');
}

export interface AuthDeps {
  store: Store;
  clock: Clock;
  accounts: AccountsService;
  proxy: ProxyService;
  ownOrigin: string;
  /** The client's address as the edge sees it (TRUST_PROXY aware). */
  clientIp: (req: Request) => string;
}

export function authMiddleware({ store, clock, accounts, proxy, ownOrigin, clientIp }: AuthDeps) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    try {
      const meta = ((req as TsRestRequest).tsRestRoute?.metadata as RouteMeta | undefined) ?? { auth: 'public' };
      req.auth = {};
      switch (meta.auth) {
        case 'public':
          break;
        case 'browserKey':
          req.auth.apiKey = await mustKey(header(req, 'x-api-key'), ['live', 'test'], 'invalid_api_key');
          break;
        case 'secretKey':
          req.auth.apiKey = await mustKey(serverKey(req), ['secret'], 'invalid_secret_key');
          break;
        case 'anyKey':
          req.auth.apiKey = await mustKey(serverKey(req), ['live', 'test', 'secret'], 'invalid_api_key');
          break;
        case 'session':
        case 'admin': {
          const session = await mustSession(req);
          // A route naming an account (in its path, or its body where it says so) acts on it; any other on the session's
          // current account. Administration acts on the administrator's.
          const named = meta.auth === 'session' ? (req.params.accountId ?? (meta.accountInBody ? bodyAccountId(req) : undefined)) : undefined;
          const member = await store.members.get(named ?? session.accountId, session.userId);
          if (!member) {
            if (named !== undefined && named !== session.accountId) throw new ApiError('account_not_found');
            // No longer a member of the session's account (removed, perhaps through another process): the session ends here.
            await accounts.logout(session);
            throw new ApiError('not_signed_in');
          }
          if (meta.auth === 'admin' && !(await accounts.isAdmin(session.accountId))) throw new ApiError('admin_only');
          if (!roleAllows(member.role, meta.role)) throw new ApiError('role_not_allowed');
          req.auth.session = session;
          req.auth.member = member;
          break;
        }
      }
      // A first-party proxy's request: believed only with the key's project's proxy secret.
      if (meta.proxy && req.auth.apiKey) {
        const proxied = await proxy.authenticate(req.auth.apiKey.projectId, req.headers);
        if (proxied) req.auth.proxy = proxied;
      }
      if (meta.csrf) checkCsrf(req, ownOrigin);
      withActor(actorOf(req), next);
    } catch (err) {
      // Express 4 does not catch rejected promises of middleware.
      next(err);
    }
  };

  function actorOf(req: Request): RequestActor {
    const { session, apiKey } = req.auth ?? {};
    const actor = session ? userActor(session) : apiKey ? { type: 'key' as const, id: apiKey.id, label: apiKey.hint } : ANONYMOUS;
    return { actor, ip: clientIp(req), userAgent: header(req, 'user-agent')?.slice(0, 512) ?? null };
  }

  async function mustSession(req: Request) {
    const session = await accounts.sessionFromCookie(readCookie(req, SESSION_COOKIE));
    if (!session) throw new ApiError('not_signed_in');
    return session;
  }

  // The email is added when a change is recorded (audit/log.ts): most requests change nothing.
  function userActor(session: Session) {
    return { type: 'user' as const, id: session.userId, label: null };
  }

  async function mustKey(presented: string | undefined, types: Parameters<typeof authenticateKey>[2], refusal: 'invalid_api_key' | 'invalid_secret_key') {
    const key = await authenticateKey(store, presented, types);
    if (!key) throw new ApiError(refusal);
    await store.apiKeys.touch(key._id, new Date(clock.now()), key.lastUsedAt);
    return key;
  }
}
