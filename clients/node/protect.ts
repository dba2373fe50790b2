// Enforcement where the customer's request lands: `protect()` (Express and
// connect middleware) and `protectFetch()` (a wrapper for fetch handlers)
// read the requestId the page sends with a protected request, claim it with
// the secret key (POST /v1/events/:requestId/claim) and act on the decision
// the project's rules made when the page identified: a block answers the
// rule's response, every other action goes on to the application with the
// claim. The page never chooses the outcome: it sends only a requestId, the
// decision is read server-side, and a requestId serves one request.
import { RequestIdSchema } from '@deviceid/contract';
import type { Claim, DecisionMethods } from './decisions.js';
import { ConflictError, DeviceIdError, GoneError, NetworkError, NotFoundError, RateLimitError, ServerError, TimeoutError } from './errors.js';
import { createServerClient } from './server.js';

declare global {
  // Express's Request, as @types/express declares it: `req.deviceid` after protect().
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The claim of the request's requestId, set by deviceid's `protect()`: absent when the request went on without one (`failOpen`). */
      deviceid?: Claim;
    }
  }
}

/** The header the page sends the requestId in, by default. */
export const REQUEST_ID_HEADER = 'deviceid-request-id';

/** Why a request was refused before the application saw it. */
export type RefusalReason =
  /** No requestId came with the request. */
  | 'missing'
  /** Not a requestId, an unknown one, or another project's. */
  | 'unknown'
  /** Already used by another protected request (a replay). */
  | 'used'
  /** Older than `maxAgeSeconds`. */
  | 'expired';

/** An answer protect() gives: status, headers (lowercase names) and body. */
export interface ProtectAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Refusal {
  reason: RefusalReason;
  /** The requestId the request carried; absent when `missing`. */
  requestId?: string;
  /** The service's refusal, when it said so (absent for `missing` and a malformed requestId). */
  error?: DeviceIdError;
  /** What protect() answers by default: 403 with `{error, code}`, the code `request_id_<reason>`. */
  response: ProtectAnswer;
}

/** The decision could not be had. */
export interface Unavailable {
  /** What went wrong: TimeoutError, NetworkError, ServerError, RateLimitError; AuthError or another for a misconfiguration. */
  error: DeviceIdError;
  /** True when the service was away, slow, failing (5xx) or rate limiting: `failOpen` applies. False for a misconfiguration (a wrong key, a wrong baseUrl): always refused. */
  outage: boolean;
  /** What protect() answers by default: 503 with `{error, code: 'deviceid_unavailable'}`. */
  response: ProtectAnswer;
}

export interface ProtectBaseOptions {
  /** The project's secret key (`svc_secret_…`); with `baseUrl`, protect() makes its own client. */
  secretKey?: string;
  /** The deviceid service, e.g. `https://deviceid.example.com`. */
  baseUrl?: string;
  /** A server client you already have (instead of `secretKey` and `baseUrl`); its retry and timeout settings apply. */
  client?: Pick<DecisionMethods, 'claimEvent'>;
  /** The request header the requestId comes in (default `deviceid-request-id`); false: none, only `field`. */
  header?: string | false;
  /**
   * A field of the request's body that carries the requestId (JSON or form;
   * Express: put `express.json()` or `express.urlencoded()` before protect()).
   * Read when the header is absent. Default: none.
   */
  field?: string;
  /** Refuse requestIds older than this many seconds (1–86 400). Default 300: identify shortly before the request. */
  maxAgeSeconds?: number;
  /**
   * When the service cannot decide (unreachable, slow, 5xx, 429): false
   * (default) answers 503; true lets the request through without a decision
   * (`req.deviceid` unset, the fetch handler's `deviceid` null). A
   * misconfiguration (a wrong key, a 404 from a wrong baseUrl) is refused
   * either way.
   */
  failOpen?: boolean;
  /** Time limit of the claim in ms. Default 5000; with `client`, the client's own unless given. */
  timeoutMs?: number;
}

/**
 * What the Express middleware reads of a request (Express's Request, or an
 * http.IncomingMessage), besides the parsed `body` a body parser leaves (not
 * declared here, so that Express goes on inferring the body of your handlers
 * as it would without protect()).
 */
export interface ProtectRequest {
  headers: Record<string, string | string[] | undefined>;
  deviceid?: Claim;
}

/** What it writes (Express's Response, or an http.ServerResponse). */
export interface ProtectResponse {
  statusCode: number;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  end(body?: string): unknown;
}

export type Next = (err?: unknown) => void;

export interface ProtectOptions<Req extends ProtectRequest = ProtectRequest, Res extends ProtectResponse = ProtectResponse> extends ProtectBaseOptions {
  /** Every successful claim, before protect() acts on it (logging, metrics). A rejection goes to `next(err)`. */
  onClaim?: (claim: Claim, req: Req) => void | Promise<void>;
  /** A block. Default: the rule's response (status, headers, body); a block without one (the ruleset's `defaultAction`) answers 403 `{"error":"Request blocked"}`. `req.deviceid` is set. */
  onBlocked?: (claim: Claim, req: Req, res: Res, next: Next) => void | Promise<void>;
  /** A refused requestId (missing, unknown, used, expired). Default: `refusal.response`, a 403 saying why. */
  onRefused?: (refusal: Refusal, req: Req, res: Res, next: Next) => void | Promise<void>;
  /** No decision could be had. Default: `next()` when `failOpen` and `unavailable.outage`, else `unavailable.response` (503). */
  onUnavailable?: (unavailable: Unavailable, req: Req, res: Res, next: Next) => void | Promise<void>;
}

export type ProtectMiddleware<Req extends ProtectRequest = ProtectRequest, Res extends ProtectResponse = ProtectResponse> = (
  req: Req,
  res: Res,
  next: Next,
) => void;

export interface ProtectFetchOptions extends ProtectBaseOptions {
  /** Every successful claim, before protectFetch() acts on it (logging, metrics). */
  onClaim?: (claim: Claim, request: Request) => void | Promise<void>;
  /** A block. Default: the rule's response; a block without one (the ruleset's `defaultAction`) answers 403 `{"error":"Request blocked"}`. */
  onBlocked?: (claim: Claim, request: Request) => Response | Promise<Response>;
  /** A refused requestId. Default: `refusal.response`, a 403 saying why. */
  onRefused?: (refusal: Refusal, request: Request) => Response | Promise<Response>;
  /** No decision could be had: a Response, or null to call the handler with `deviceid` null. Default: null when `failOpen` and `outage`, else the 503. */
  onUnavailable?: (unavailable: Unavailable, request: Request) => Response | null | Promise<Response | null>;
}

/** A fetch handler behind protectFetch(): the claim comes second (null only when `failOpen` let the request through), the runtime's own arguments after it. */
export type ProtectedFetchHandler<A extends unknown[] = []> = (request: Request, deviceid: Claim | null, ...rest: A) => Response | Promise<Response>;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

const answer = (status: number, error: string, code: string): ProtectAnswer => ({
  status,
  headers: { ...JSON_HEADERS },
  body: JSON.stringify({ error, code }),
});

/**
 * A block's response as protect() answers it. The service gives a block rule
 * without a response of its own a 403 `{"error":"Request blocked"}`; a block
 * by the ruleset's `defaultAction` carries none and gets the same here.
 */
export function blockAnswer(claim: Claim): ProtectAnswer {
  const r = claim.decision.response;
  if (!r) return { status: 403, headers: { ...JSON_HEADERS }, body: JSON.stringify({ error: 'Request blocked' }) };
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  if (!('cache-control' in headers)) headers['cache-control'] = 'no-store';
  if (r.body !== undefined && !('content-type' in headers)) headers['content-type'] = 'text/plain; charset=utf-8';
  return { status: r.status, headers, body: r.body ?? '' };
}

const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

interface Judge {
  header: string | null;
  field: string | null;
  failOpen: boolean;
  judge(requestId: string | undefined): Promise<Outcome>;
}

type Outcome =
  { kind: 'pass'; claim: Claim } | { kind: 'block'; claim: Claim } | { kind: 'refused'; refusal: Refusal } | { kind: 'unavailable'; unavailable: Unavailable };

function refusal(reason: RefusalReason, where: string, requestId?: string, error?: DeviceIdError): Refusal {
  const message = {
    missing: `No requestId came with the request (${where}): identify first`,
    unknown: 'Unknown requestId',
    used: 'This requestId was already used for a protected request: identify again',
    expired: 'This requestId is too old: identify again',
  }[reason];
  return {
    reason,
    ...(requestId !== undefined && { requestId }),
    ...(error && { error }),
    response: answer(403, message, `request_id_${reason}`),
  };
}

/** Is the failure the service's (away, slow, failing, busy) rather than ours (a wrong key or address)? */
function isOutage(err: DeviceIdError): boolean {
  return err instanceof NetworkError || err instanceof TimeoutError || err instanceof ServerError || err instanceof RateLimitError;
}

function createJudge(options: ProtectBaseOptions): Judge {
  if (!options || typeof options !== 'object') throw new TypeError('deviceid protect: options are required');
  const { maxAgeSeconds = 300, timeoutMs = 5000, failOpen = false } = options;
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 1 || maxAgeSeconds > 86_400) {
    throw new TypeError('deviceid protect: maxAgeSeconds must be an integer from 1 to 86400');
  }
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new TypeError('deviceid protect: timeoutMs must be a positive number');
  if (typeof failOpen !== 'boolean') throw new TypeError('deviceid protect: failOpen must be a boolean');
  const header = options.header === false ? null : (options.header ?? REQUEST_ID_HEADER).toLowerCase();
  if (header !== null && !HEADER_NAME.test(header)) throw new TypeError('deviceid protect: header must be an HTTP header name');
  const field = options.field ?? null;
  if (field !== null && (typeof field !== 'string' || field === '')) throw new TypeError('deviceid protect: field must be a non-empty string');
  if (header === null && field === null) throw new TypeError('deviceid protect: give a header or a field for the requestId');
  let client: Pick<DecisionMethods, 'claimEvent'>;
  if (options.client) {
    if (typeof options.client.claimEvent !== 'function') throw new TypeError('deviceid protect: client must be a server client (createServerClient)');
    client = options.client;
  } else {
    if (typeof options.baseUrl !== 'string') throw new TypeError('deviceid protect: give baseUrl and secretKey, or a client');
    // A 429 may be waited out briefly, once; a refused connection retried once. Never a claim that may have arrived (decisions.ts).
    client = createServerClient({ baseUrl: options.baseUrl, secretKey: options.secretKey ?? '', timeoutMs, retries: 1, maxRetryAfterMs: 1000 });
  }
  const where = [header && `header ${header}`, field && `field ${field}`].filter(Boolean).join(' or ');

  return {
    header,
    field,
    failOpen,
    async judge(requestId) {
      if (requestId === undefined || requestId === '') return { kind: 'refused', refusal: refusal('missing', where) };
      // Not even shaped like one: unknown, without asking the service.
      if (!RequestIdSchema.safeParse(requestId).success) return { kind: 'refused', refusal: refusal('unknown', where, requestId.slice(0, 64)) };
      let claim: Claim;
      try {
        claim = await client.claimEvent(requestId, { maxAgeSeconds, ...(options.timeoutMs !== undefined && { timeoutMs }) });
      } catch (err) {
        if (!(err instanceof DeviceIdError)) throw err;
        const code = err.serverCode;
        if (err instanceof ConflictError && code === 'request_id_used') return { kind: 'refused', refusal: refusal('used', where, requestId, err) };
        if (err instanceof GoneError && code === 'request_id_expired') return { kind: 'refused', refusal: refusal('expired', where, requestId, err) };
        if (err instanceof NotFoundError && code === 'event_not_found') return { kind: 'refused', refusal: refusal('unknown', where, requestId, err) };
        return {
          kind: 'unavailable',
          unavailable: { error: err, outage: isOutage(err), response: answer(503, 'The request could not be checked: try again', 'deviceid_unavailable') },
        };
      }
      return claim.decision.action === 'block' ? { kind: 'block', claim } : { kind: 'pass', claim };
    },
  };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.trim() || undefined;
}

function fieldOf(body: unknown, field: string): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const v = (body as Record<string, unknown>)[field];
  return typeof v === 'string' ? v.trim() || undefined : undefined;
}

function write(res: ProtectResponse, a: ProtectAnswer): void {
  res.statusCode = a.status;
  for (const [name, value] of Object.entries(a.headers)) res.setHeader(name, value);
  res.end(a.body);
}

/**
 * Express/connect middleware for the routes it guards:
 *
 * ```ts
 * app.post('/login', express.json(), protect({ baseUrl, secretKey: process.env.DEVICEID_SECRET_KEY! }), (req, res) => {
 *   if (req.deviceid?.decision.action === 'challenge') return res.status(401).json({ secondFactor: true });
 *   …
 * });
 * ```
 */
export function protect<Req extends ProtectRequest = ProtectRequest, Res extends ProtectResponse = ProtectResponse>(
  options: ProtectOptions<Req, Res>,
): ProtectMiddleware<Req, Res> {
  const j = createJudge(options);
  const { onClaim, onBlocked, onRefused, onUnavailable } = options;
  return (req, res, next) => {
    const run = async () => {
      let requestId = j.header === null ? undefined : firstHeader(req.headers[j.header]);
      if (requestId === undefined && j.field !== null) {
        const { body } = req as { body?: unknown };
        if (body === undefined) {
          throw new TypeError(
            `deviceid protect: the requestId field ${j.field} needs a parsed body: put express.json() or express.urlencoded() before protect()`,
          );
        }
        requestId = fieldOf(body, j.field);
      }
      const outcome = await j.judge(requestId);
      switch (outcome.kind) {
        case 'pass':
        case 'block':
          req.deviceid = outcome.claim;
          await onClaim?.(outcome.claim, req);
          if (outcome.kind === 'pass') return next();
          if (onBlocked) return onBlocked(outcome.claim, req, res, next);
          return write(res, blockAnswer(outcome.claim));
        case 'refused':
          if (onRefused) return onRefused(outcome.refusal, req, res, next);
          return write(res, outcome.refusal.response);
        case 'unavailable':
          if (onUnavailable) return onUnavailable(outcome.unavailable, req, res, next);
          if (j.failOpen && outcome.unavailable.outage) return next();
          return write(res, outcome.unavailable.response);
      }
    };
    run().catch(next);
  };
}

const toResponse = (a: ProtectAnswer) => new Response(a.body, { status: a.status, headers: a.headers });

/** The requestId in a body of a JSON or form request, read from a copy (the handler reads the body itself). */
async function bodyField(request: Request, field: string): Promise<string | undefined> {
  if (request.body === null) return undefined;
  const type = (request.headers.get('content-type') ?? '').toLowerCase();
  try {
    if (type.includes('json')) return fieldOf(await request.clone().json(), field);
    if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) {
      const v = (await request.clone().formData()).get(field);
      return typeof v === 'string' ? v.trim() || undefined : undefined;
    }
  } catch {
    // A body that does not parse carries no requestId.
  }
  return undefined;
}

/**
 * Wraps a fetch handler (Next.js route handlers, Hono, Deno, Bun, Workers):
 *
 * ```ts
 * export const POST = protectFetch(async (request, deviceid) => {
 *   if (deviceid?.decision.action === 'challenge') return Response.json({ secondFactor: true }, { status: 401 });
 *   …
 * }, { baseUrl, secretKey: process.env.DEVICEID_SECRET_KEY! });
 * ```
 */
export function protectFetch<A extends unknown[] = []>(
  handler: ProtectedFetchHandler<A>,
  options: ProtectFetchOptions,
): (request: Request, ...rest: A) => Promise<Response> {
  if (typeof handler !== 'function') throw new TypeError('deviceid protectFetch: handler must be a function');
  const j = createJudge(options);
  const { onClaim, onBlocked, onRefused, onUnavailable } = options;
  return async (request, ...rest) => {
    let requestId = j.header === null ? undefined : request.headers.get(j.header)?.trim() || undefined;
    if (requestId === undefined && j.field !== null) requestId = await bodyField(request, j.field);
    const outcome = await j.judge(requestId);
    switch (outcome.kind) {
      case 'pass':
      case 'block':
        await onClaim?.(outcome.claim, request);
        if (outcome.kind === 'pass') return handler(request, outcome.claim, ...rest);
        return onBlocked ? onBlocked(outcome.claim, request) : toResponse(blockAnswer(outcome.claim));
      case 'refused':
        return onRefused ? onRefused(outcome.refusal, request) : toResponse(outcome.refusal.response);
      case 'unavailable': {
        const own = onUnavailable ? await onUnavailable(outcome.unavailable, request) : undefined;
        if (own) return own;
        if (own === null || (j.failOpen && outcome.unavailable.outage)) return handler(request, null, ...rest);
        return toResponse(outcome.unavailable.response);
      }
    }
  };
}
