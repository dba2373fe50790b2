// Typed errors of the Node clients. Every failure a client call can end in is
// one of these, with the HTTP status and the parsed error body when there was
// a response. Messages name the method, path and status: never a key, never a
// header, never a query string (a linkedId may be personal data).

export type DeviceIdErrorCode =
  | 'auth'
  | 'not_found'
  | 'validation'
  | 'rate_limited'
  | 'server'
  | 'timeout'
  | 'network'
  | 'aborted'
  | 'conflict'
  | 'gone'
  | 'unexpected_response'
  | 'grant_expired'
  | 'grant_consumed'
  | 'grant_denied';

export interface ErrorDetails {
  /** HTTP status of the response; undefined when there was none (timeout, network, abort). */
  status?: number;
  /** Parsed response body (usually `{error: string}`), or the text of a non-JSON body. */
  body?: unknown;
  /** Response headers, when there was a response. */
  headers?: Headers;
  /** `METHOD /path` of the request (path without query string). */
  request?: string;
  /** How many attempts were made (1 = no retry). */
  attempts?: number;
  cause?: unknown;
}

/** Base class of every error thrown by `@deviceid/client` and `@deviceid/cli`. */
export class DeviceIdError extends Error {
  readonly code: DeviceIdErrorCode;
  readonly status: number | undefined;
  readonly body: unknown;
  readonly headers: Headers | undefined;
  /** `METHOD /path` (no query string). */
  readonly request: string | undefined;
  readonly attempts: number;
  /** The server's `X-Request-Id` (quote it when reporting a problem). */
  readonly requestId: string | undefined;

  constructor(code: DeviceIdErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = details.status;
    this.body = details.body;
    this.headers = details.headers;
    this.request = details.request;
    this.attempts = details.attempts ?? 1;
    this.requestId = details.headers?.get('x-request-id') ?? undefined;
  }

  /** The `error` string of the response body, when there is one. */
  get serverMessage(): string | undefined {
    const b = this.body as { error?: unknown } | undefined;
    return b && typeof b === 'object' && typeof b.error === 'string' ? b.error : undefined;
  }

  /** The `code` of the response body, when there is one (`request_id_used`, `list_exists`, …). */
  get serverCode(): string | undefined {
    const b = this.body as { code?: unknown } | undefined;
    return b && typeof b === 'object' && typeof b.code === 'string' ? b.code : undefined;
  }
}

/** 401 (missing, unknown, revoked or wrong kind of key) or 403 (e.g. domain not allowed). */
export class AuthError extends DeviceIdError {}

/** 404: unknown id, or one that belongs to another account. */
export class NotFoundError extends DeviceIdError {}

/** 400 (a field failed validation; `serverMessage` names it), also 413/415. */
export class ValidationError extends DeviceIdError {}

/**
 * 409: the request conflicts with the current state; `serverCode` says which
 * (`request_id_used`: a replayed requestId; `ruleset_conflict`, `list_exists`,
 * `list_full`, `list_kind_mismatch`).
 */
export class ConflictError extends DeviceIdError {}

/** 410: no longer available (`request_id_expired`: a requestId older than the claim's `maxAgeSeconds`). */
export class GoneError extends DeviceIdError {}

/** 429: a rate limit or the monthly quota. */
export class RateLimitError extends DeviceIdError {
  /** Requests counted in the current window (second or month), from the body. */
  readonly usage: number | undefined;
  /** The plan's limit for that window, from the body. */
  readonly limit: number | undefined;
  /** Seconds to wait before retrying, from `Retry-After`. */
  readonly retryAfter: number | undefined;

  constructor(message: string, details: ErrorDetails, retryAfterMs: number | undefined) {
    super('rate_limited', message, details);
    const b = (details.body ?? {}) as { usage?: unknown; limit?: unknown };
    this.usage = typeof b.usage === 'number' ? b.usage : undefined;
    this.limit = typeof b.limit === 'number' ? b.limit : undefined;
    this.retryAfter = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
  }
}

/** 5xx after the retries allowed for the call were used up. */
export class ServerError extends DeviceIdError {}

/** An attempt got no complete response within `timeoutMs`. */
export class TimeoutError extends DeviceIdError {}

/** The request could not be sent or its response not read (DNS, refused, reset). */
export class NetworkError extends DeviceIdError {}

/** The caller's AbortSignal fired. `cause` is the signal's reason. */
export class AbortedError extends DeviceIdError {}

/** A status the contract does not declare and no other class covers, or a body that does not match the contract. */
export class UnexpectedResponseError extends DeviceIdError {}

/** Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}

/** The typed error of a non-2xx response. */
export function errorFromResponse(res: { status: number; body: unknown; headers: Headers }, request: string, attempts: number): DeviceIdError {
  const details: ErrorDetails = { status: res.status, body: res.body, headers: res.headers, request, attempts };
  const b = res.body as { error?: unknown } | undefined;
  const said = b && typeof b === 'object' && typeof b.error === 'string' ? `: ${b.error}` : '';
  const message = `${request} failed with ${res.status}${said}`;
  const s = res.status;
  if (s === 401 || s === 403) return new AuthError('auth', message, details);
  if (s === 404) return new NotFoundError('not_found', message, details);
  if (s === 400 || s === 413 || s === 415 || s === 422) return new ValidationError('validation', message, details);
  if (s === 409) return new ConflictError('conflict', message, details);
  if (s === 410) return new GoneError('gone', message, details);
  if (s === 429) return new RateLimitError(message, details, parseRetryAfter(res.headers.get('retry-after')));
  if (s >= 500) return new ServerError('server', message, details);
  if (s >= 300 && s < 400) {
    // Keys are never sent on to a redirect target; the caller fixes baseUrl instead.
    const to = res.headers.get('location');
    let where = '';
    try {
      if (to) where = ` to ${new URL(to).origin}`;
    } catch {
      where = '';
    }
    return new UnexpectedResponseError('unexpected_response', `${request} was redirected (${s})${where}; set baseUrl to the service's final address`, details);
  }
  return new UnexpectedResponseError('unexpected_response', message, details);
}
