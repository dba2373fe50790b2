// The fetcher every client is built on: ts-rest's `initClient` hands each call
// to it. It adds the key header a route's contract metadata asks for, a
// per-attempt timeout, retries with exponential backoff and full jitter, and
// turns failures into the typed errors of errors.ts.
//
// Retry policy:
// - GET and DELETE (idempotent): network errors, timeouts, 429 and 500/502/503/504.
// - Any method: 429 (the server refuses before doing any work, so nothing
//   happened) and a refused connection (the request never left).
// - Never: any other failure of POST/PUT/PATCH (identify, updateEvent, a
//   claim, the device flow): the server may have acted, and a replay could
//   double-count or consume a key or a requestId. A POST that changes nothing
//   (a rule preview) says so with `retrySafe` and is retried like a GET.
// A `Retry-After` is honoured (we never retry sooner); when it asks for longer
// than `maxRetryAfterMs` (e.g. the monthly quota), the call fails at once.
import { initClient, isZodType, UnknownStatusError, type ApiFetcherArgs, type AppRouter, type InitClientReturn } from '@ts-rest/core';
import type { RouteMeta } from '@deviceid/contract';
import { AbortedError, DeviceIdError, errorFromResponse, NetworkError, parseRetryAfter, TimeoutError, UnexpectedResponseError } from './errors.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the service runs, e.g. `https://deviceid.example.com`. */
  baseUrl: string;
  /** Milliseconds one attempt may take, response body included. Default 10 000. */
  timeoutMs?: number;
  /** Further attempts after the first, where the retry policy allows them. Default 2. */
  retries?: number;
  /** Backoff: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs·2ⁿ)]. Defaults 200 and 5 000. */
  backoff?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Longest `Retry-After` the client waits out by itself; a longer one fails the call. Default 30 000. */
  maxRetryAfterMs?: number;
  /** A `fetch` implementation (proxies, tests, edge runtimes). Default: the global fetch. */
  fetch?: FetchLike;
  /** Check every response body against the contract's schema (zod). Default false. */
  validateResponses?: boolean;
  /** Sent as `User-Agent`. */
  userAgent?: string;
}

/** Options of one call. */
export interface CallOptions {
  /** Cancels the call (and any wait between retries); it rejects with AbortedError. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's `retries` for this call. */
  retries?: number;
}

export interface RawResponse {
  status: number;
  body: unknown;
  headers: Headers;
  /** `METHOD /path` of the request. */
  request?: string;
  /** Attempts made, retries included. */
  attempts?: number;
}

/** Provides the key header(s) for a route's `auth` kind. Keys live only in this closure. */
export type Credentials = (auth: RouteMeta['auth']) => Record<string, string>;

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

const DEFAULTS = {
  timeoutMs: 10_000,
  retries: 2,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 30_000,
};

export const SDK_USER_AGENT = 'deviceid-node/0.1.0';

export function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError('baseUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('baseUrl must be an absolute http(s) URL');
  if (url.username || url.password) throw new TypeError('baseUrl must not contain credentials');
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function checkCount(name: string, v: number | undefined): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new TypeError(`${name} must be a non-negative integer`);
}

function checkPositive(name: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new TypeError(`${name} must be a positive number`);
}

/** Resolves after `ms`, or rejects with AbortedError when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted(signal!));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function aborted(signal: AbortSignal, request?: string): AbortedError {
  return new AbortedError('aborted', request ? `${request} was aborted` : 'Aborted', { cause: signal.reason, ...(request && { request }) });
}

/** `ECONNREFUSED` and friends: the request certainly never reached the server. */
function neverSent(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function backoffDelay(attempt: number, base: number, max: number): number {
  // Full jitter (AWS architecture blog): spreads retrying clients apart.
  return Math.random() * Math.min(max, base * 2 ** attempt);
}

async function readBody(res: Response): Promise<unknown> {
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (text === '') return undefined;
  // JSON lines (`application/x-ndjson`, the labels export) stay text: one line alone would parse as JSON.
  if (type.includes('json') && !type.includes('ndjson')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** `retrySafe`: the call changes nothing on the server, whatever its method: retried like a GET. */
export type Fetcher = (args: ApiFetcherArgs & { call?: CallOptions; retrySafe?: boolean }) => Promise<RawResponse>;

/** The ts-rest `api` implementation with timeouts, retries and key headers. */
export function createFetcher(options: ClientOptions, credentials: Credentials): Fetcher {
  checkPositive('timeoutMs', options.timeoutMs);
  checkCount('retries', options.retries);
  checkPositive('backoff.baseDelayMs', options.backoff?.baseDelayMs);
  checkPositive('backoff.maxDelayMs', options.backoff?.maxDelayMs);
  checkCount('maxRetryAfterMs', options.maxRetryAfterMs);
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const base = options.backoff?.baseDelayMs ?? DEFAULTS.baseDelayMs;
  const max = options.backoff?.maxDelayMs ?? DEFAULTS.maxDelayMs;
  const maxRetryAfter = options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs;
  const userAgent = options.userAgent ?? SDK_USER_AGENT;

  return async (args) => {
    const { route, path, method, body, call } = args;
    const timeoutMs = call?.timeoutMs ?? options.timeoutMs ?? DEFAULTS.timeoutMs;
    const retries = call?.retries ?? options.retries ?? DEFAULTS.retries;
    checkPositive('timeoutMs', call?.timeoutMs);
    checkCount('retries', call?.retries);
    const userSignal = call?.signal ?? args.fetchOptions?.signal ?? undefined;
    const idempotent = method === 'GET' || method === 'HEAD' || method === 'DELETE' || args.retrySafe === true;
    const auth = (route.metadata as RouteMeta | undefined)?.auth ?? 'public';
    const request = `${method} ${new URL(path).pathname}`;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': userAgent,
      ...args.headers,
      ...credentials(auth),
    };

    for (let attempt = 0; ; attempt++) {
      if (userSignal?.aborted) throw aborted(userSignal, request);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = userSignal ? AbortSignal.any([userSignal, timeout]) : timeout;
      let waitMs = 0;
      try {
        const res = await doFetch(path, { method, headers, body: body ?? null, signal, redirect: 'manual' });
        const responseBody = await readBody(res);
        const raw: RawResponse = { status: res.status, body: responseBody, headers: res.headers, request, attempts: attempt + 1 };
        if (!RETRYABLE_STATUS.has(res.status)) return validated(raw, route, options.validateResponses ?? args.validateResponse);
        // 429 and 5xx: wait and retry when the policy allows it, else the caller gets the response.
        const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
        if (retryAfter !== undefined && retryAfter > maxRetryAfter) return raw;
        const retryable = res.status === 429 || idempotent;
        if (!retryable || attempt >= retries) return raw;
        waitMs = retryAfter ?? 0;
      } catch (err) {
        if (err instanceof DeviceIdError) throw err;
        if (userSignal?.aborted) throw aborted(userSignal, request);
        let failure: DeviceIdError;
        let retryable: boolean;
        if (timeout.aborted) {
          failure = new TimeoutError('timeout', `${request} timed out after ${timeoutMs} ms`, { request, attempts: attempt + 1, cause: err });
          retryable = idempotent;
        } else {
          failure = new NetworkError('network', `${request} failed: ${describeNetworkError(err)}`, { request, attempts: attempt + 1, cause: err });
          retryable = idempotent || neverSent(err);
        }
        if (!retryable || attempt >= retries) throw failure;
      }
      // Never sooner than Retry-After; jitter on top keeps clients apart.
      const delay = waitMs + backoffDelay(attempt, base, max);
      await sleep(delay, userSignal);
    }
  };
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return err instanceof Error ? err.message : 'network error';
}

function validated(raw: RawResponse, route: ApiFetcherArgs['route'], validate: boolean | undefined): RawResponse {
  if (!validate) return raw;
  const schema = (route.responses as Record<number, unknown>)[raw.status];
  if (!isZodType(schema)) return raw;
  const parsed = schema.safeParse(raw.body);
  if (parsed.success) return { ...raw, body: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'invalid';
  throw new UnexpectedResponseError('unexpected_response', `${raw.request} answered ${raw.status} with a body that does not match the contract (${where})`, {
    status: raw.status,
    headers: raw.headers,
    request: raw.request,
    attempts: raw.attempts,
    cause: parsed.error,
  });
}

/** The ts-rest client arguments of every raw client (named so that declarations can spell the client's type). */
export interface RawClientArgs {
  baseUrl: string;
  api: Fetcher;
  throwOnUnknownStatus: true;
  validateResponse: false;
}

export type RawClient<T extends AppRouter> = InitClientReturn<T, RawClientArgs>;

/** A ts-rest client for `router` over this fetcher; `unwrap` runs one of its calls. */
export function createRawClient<T extends AppRouter>(router: T, options: ClientOptions, credentials: Credentials): RawClient<T> {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const api = createFetcher(options, credentials);
  // throwOnUnknownStatus: statuses the contract does not declare (a proxy's
  // 502, say) reach us as UnknownStatusError and are mapped like the rest.
  const args: RawClientArgs = { baseUrl, api, throwOnUnknownStatus: true, validateResponse: false };
  return initClient(router, args);
}

/** Runs a raw client call: the body of its success status, or the typed error of anything else. */
export async function unwrap<TBody>(run: () => Promise<{ status: number; body: unknown; headers: Headers }>, success = 200): Promise<TBody> {
  let res: RawResponse;
  try {
    res = await run();
  } catch (err) {
    if (err instanceof UnknownStatusError) res = err.response as RawResponse;
    else throw err;
  }
  if (res.status === success) return res.body as TBody;
  throw errorFromResponse(res, res.request ?? 'request', res.attempts ?? 1);
}
