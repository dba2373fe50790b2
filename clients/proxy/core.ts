// The proxy's core, shared by the fetch handler (fetch.ts) and the
// Express/connect middleware (node.ts): which paths it serves, what it
// forwards to the service and what it passes back. Runtime-neutral: only
// fetch, Headers, URL, AbortController and TextEncoder.

/** Headers the proxy sends to the service (the contract's PROXY_HEADERS; a test keeps them equal). */
export const PROXY_HEADERS = {
  secret: 'deviceid-proxy-secret',
  clientIp: 'deviceid-proxy-client-ip',
  host: 'deviceid-proxy-host',
  proto: 'deviceid-proxy-proto',
  error: 'deviceid-proxy-error',
  linkedId: 'deviceid-proxy-linked-id',
} as const;

/**
 * Headers a protected request reaches the site with (protect option): the
 * decision read with the secret key, never the browser's. Every `deviceid-*`
 * header the browser sent, but the requestId's, is removed first.
 */
export const DECISION_HEADERS = {
  /** `allow`, `challenge` or `review` (a block never reaches the site); `unavailable` when `failOpen` let the request through without one. */
  decision: 'deviceid-decision',
  /** The visitor the requestId was issued to. */
  visitorId: 'deviceid-visitor-id',
  /** The requestId claimed for this request. */
  requestId: 'deviceid-request-id',
  /** The live rule that decided; absent when none matched (the default action). */
  ruleId: 'deviceid-rule-id',
  /** The event's suspect score, 0–100. */
  suspectScore: 'deviceid-suspect-score',
} as const;

/** The device cookie the service sets: the only cookie forwarded either way. */
export const DEVICE_COOKIE = '_didh';

/** The service's request body limit (identify). */
export const BODY_LIMIT = 256 * 1024;

/**
 * Browser headers worth forwarding: what identify and the agent script use
 * (the key, the page's Origin for the allowlist, what the risk engine reads
 * of the browser). Nothing else goes: no other cookie, no Authorization, no
 * header of the site's own.
 */
const FORWARDED = [
  'content-type',
  'x-api-key',
  'origin',
  'referer',
  'user-agent',
  'accept',
  'accept-language',
  'sec-ch-ua',
  'sec-ch-ua-mobile',
  'sec-ch-ua-platform',
  'sec-fetch-site',
  'sec-fetch-mode',
  'sec-fetch-dest',
  'if-none-match',
  // Web Bot Auth (RFC 9421): a signed agent's signature, verified by the service against its key directory.
  'signature',
  'signature-input',
  'signature-agent',
] as const;

/** Answer headers passed back to the browser (besides our Set-Cookie). */
const PASSED_BACK = ['content-type', 'cache-control', 'etag', 'retry-after', 'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/** Where the browser's address comes from when the runtime does not say. */
export type ClientIpSource =
  /** A header a platform in front of you sets (e.g. `cf-connecting-ip`, `x-real-ip`), read as `{ header, hops: 1 }`. */
  | string
  /** A list header such as `x-forwarded-for`: the entry `hops` from its right end (1: the last one, written by the proxy nearest you). */
  | { header: string; hops?: number };

/**
 * A protected path of the site: `path` is the path (no query), matched
 * whatever its case, trailing or repeated slashes, dot segments and
 * percent-encoding; or a RegExp, tested on the path as it came and on that
 * loose form. `method`: any when absent; GET covers HEAD.
 */
export interface ProtectedPath {
  method?: string;
  path: string | RegExp;
}

/** The protected paths of the site, claimed at the edge before the request reaches the site. */
export interface ProtectOptions {
  /** The project's secret key (`svc_secret_…`), which claims requestIds. Keep it on the server, as the proxy secret. */
  secretKey: string;
  /** The requests to protect. */
  paths: ProtectedPath[];
  /** The header the page sends the requestId in (default `deviceid-request-id`). */
  header?: string;
  /** Refuse requestIds older than this many seconds (1–86 400, default 300). */
  maxAgeSeconds?: number;
  /**
   * When the service cannot decide (unreachable, slow, 5xx, 429): false
   * (default) answers 503; true forwards the request with
   * `deviceid-decision: unavailable`. A wrong secret key is refused either way.
   */
  failOpen?: boolean;
}

export interface CoreOptions {
  /** The deviceid service, e.g. `https://deviceid.example.com`. */
  serviceUrl: string;
  /** The project's proxy secret (`svc_proxy_…`), from the dashboard. Keep it out of pages and repositories. */
  secret: string;
  /** The path on your site the proxy serves (the agent's `endpoint`), default `/metrics`. */
  pathPrefix?: string;
  /** Set the device cookie for a whole registrable domain (`example.com`) instead of the host the proxy serves. */
  cookieDomain?: string;
  /** Time limit of each call to the service, in ms (default 5000). */
  timeoutMs?: number;
  /** The fetch to call the service with (default: the global one). */
  fetch?: typeof fetch;
  /** Protected paths: claimed at the edge, a block answered there, the decision forwarded to the site in `deviceid-*` headers. */
  protect?: ProtectOptions;
}

/** What an adapter read from the browser's request. */
export interface CoreRequest {
  method: string;
  /** The path, without the query. */
  path: string;
  headers: Headers;
  /** The body as bytes; called only for identify. null when larger than BODY_LIMIT. */
  body(): Promise<Uint8Array | null>;
  clientIp: string | null;
  host: string;
  proto: 'http' | 'https';
  /** The signed-in user's id from the site's own session (the adapter's `linkedId` option); asked only for identify. */
  linkedId?: () => Promise<string | null | undefined> | string | null | undefined;
}

export interface CoreResponse {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array | string | null;
}

/** What becomes of a protected request: an answer at the edge, or on to the site with these headers. */
export type Guarded = { answer: CoreResponse } | { forward: Array<[string, string]> };

export interface Core {
  /** Whether the path is the proxy's (under its prefix). */
  owns(path: string): boolean;
  handle(req: CoreRequest): Promise<CoreResponse>;
  /** Whether the request is one of the protected paths (always false without the protect option). */
  protects(method: string, path: string): boolean;
  /** Whether a header the browser sent must not reach the site (a `deviceid-*` header other than the requestId's; none without protect). */
  strips(name: string): boolean;
  /** Claims the request's requestId: a block or a refusal is answered, anything else forwarded with the decision headers. */
  guard(headers: Headers): Promise<Guarded>;
}

interface CachedAgent {
  body: Uint8Array;
  etag: string | null;
  contentType: string;
  /** When it was fetched or last revalidated, and for how long the service lets it be reused. */
  checkedAt: number;
  maxAgeMs: number;
}

type ErrorCode = 'timeout' | 'unreachable' | 'service_error';

/** The service's answer, its body read within the time limit. */
interface Answer {
  res: Response;
  body: Uint8Array;
}

const json = (status: number, error: string, code: string, more: Array<[string, string]> = []): CoreResponse => ({
  status,
  headers: [['content-type', 'application/json; charset=utf-8'], ['cache-control', 'no-store'], ...more],
  body: JSON.stringify({ error, code }),
});

/** The address a header names (`hops` entries from the right of a list); null when absent or empty. */
export function ipFromHeader(headers: Headers, source: ClientIpSource): string | null {
  const { header, hops = 1 } = typeof source === 'string' ? { header: source } : source;
  const entries = (headers.get(header) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return entries[entries.length - Math.max(1, hops)] ?? null;
}

/** Our cookie alone, from a Cookie header. */
function ourCookie(cookie: string | null): string | null {
  for (const part of (cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === DEVICE_COOKIE) {
      const value = part.slice(eq + 1).trim();
      if (/^[A-Za-z0-9._-]{1,200}$/.test(value)) return `${DEVICE_COOKIE}=${value}`;
    }
  }
  return null;
}

const REQUEST_ID = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

interface Protection {
  secretKey: string;
  paths: Array<{ method: string | null; path: string | RegExp }>;
  header: string;
  maxAgeSeconds: number;
  failOpen: boolean;
}

function protection(options: ProtectOptions | undefined): Protection | null {
  if (options === undefined) return null;
  const fail = (what: string) => new TypeError(`deviceid proxy: protect.${what}`);
  if (typeof options.secretKey !== 'string' || !options.secretKey.startsWith('svc_secret_'))
    throw fail('secretKey must be the project’s secret key (svc_secret_…)');
  if (!Array.isArray(options.paths) || options.paths.length === 0) throw fail('paths must list the paths to protect');
  const paths = options.paths.map((p) => {
    if (!p || !(p.path instanceof RegExp || (typeof p.path === 'string' && p.path.startsWith('/'))))
      throw fail('paths: each path is a path starting with / or a RegExp');
    if (p.method !== undefined && (typeof p.method !== 'string' || !/^[A-Za-z]+$/.test(p.method))) throw fail('paths: method must be an HTTP method');
    // Without g or y: test() of such a RegExp would depend on the previous call.
    const path = p.path instanceof RegExp ? new RegExp(p.path.source, p.path.flags.replace(/[gy]/g, '')) : canonicalPath(p.path);
    return { method: p.method?.toUpperCase() ?? null, path };
  });
  const header = (options.header ?? DECISION_HEADERS.requestId).toLowerCase();
  if (!HEADER_NAME.test(header)) throw fail('header must be an HTTP header name');
  const maxAgeSeconds = options.maxAgeSeconds ?? 300;
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 1 || maxAgeSeconds > 86_400) throw fail('maxAgeSeconds must be an integer from 1 to 86400');
  const failOpen = options.failOpen ?? false;
  if (typeof failOpen !== 'boolean') throw fail('failOpen must be a boolean');
  return { secretKey: options.secretKey.trim(), paths, header, maxAgeSeconds, failOpen };
}

/**
 * A path as loosely as any server behind the proxy might route it: dot
 * segments resolved, percent-encoding decoded, repeated and trailing slashes
 * dropped, lower case (Express routes case-insensitively and with or without
 * a trailing slash; nginx decodes and merges slashes). A protected path is
 * matched on this form too, so that no spelling of it slips past the claim.
 */
export function canonicalPath(path: string): string {
  let p = path;
  // Decoding can reveal more to resolve (%2F..%2F): until nothing changes, a few rounds at most.
  for (let round = 0; round < 4; round++) {
    const before = p;
    // Backslashes as slashes and no empty segments first: '//login' must not read as a host.
    p = new URL(`http://x${`/${p}`.replace(/[\\/]+/g, '/')}`).pathname;
    try {
      p = decodeURIComponent(p);
    } catch {
      // A malformed escape stays as it is.
    }
    if (p === before) break;
  }
  p = p.replace(/[\\/]+/g, '/').toLowerCase();
  return p.length > 1 ? p.replace(/\/$/, '') : p;
}

/** Whether a request's method is the path's: any when none is given; a protected GET covers HEAD, which servers route to it. */
function methodMatches(protectedMethod: string | null, method: string): boolean {
  const m = method.toUpperCase();
  return protectedMethod === null || protectedMethod === m || (protectedMethod === 'GET' && m === 'HEAD');
}

/** The claim's fields the proxy forwards (the service's ClaimSchema). */
interface Claim {
  visitorId: string;
  requestId: string;
  suspectScore: number;
  decision: { action: string; ruleId?: string; response?: { status: number; headers?: Record<string, string>; body?: string } };
}

const REFUSALS = {
  missing: 'No requestId came with the request: identify first',
  unknown: 'Unknown requestId',
  used: 'This requestId was already used for a protected request: identify again',
  expired: 'This requestId is too old: identify again',
} as const;

const refused = (reason: keyof typeof REFUSALS): Guarded => ({ answer: json(403, REFUSALS[reason], `request_id_${reason}`) });

/** The service's answer for a block rule without a response of its own; a block by the ruleset's defaultAction carries none and gets it here. */
const DEFAULT_BLOCK: CoreResponse = {
  status: 403,
  headers: [
    ['content-type', 'application/json; charset=utf-8'],
    ['cache-control', 'no-store'],
  ],
  body: '{"error":"Request blocked"}',
};

/** A block's response as the edge answers it: the rule's status, headers and body. */
function blockAnswer(claim: Claim): CoreResponse {
  const r = claim.decision.response;
  if (!r) return DEFAULT_BLOCK;
  const headers = Object.entries(r.headers ?? {});
  if (!headers.some(([n]) => n === 'cache-control')) headers.push(['cache-control', 'no-store']);
  if (r.body !== undefined && !headers.some(([n]) => n === 'content-type')) headers.push(['content-type', 'text/plain; charset=utf-8']);
  return { status: r.status, headers, body: r.body ?? '' };
}

const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

export function createCore(options: CoreOptions): Core {
  if (!options || typeof options.serviceUrl !== 'string') throw new TypeError('deviceid proxy: serviceUrl is required');
  const service = new URL(options.serviceUrl);
  if (service.protocol !== 'https:' && service.protocol !== 'http:') throw new TypeError('deviceid proxy: serviceUrl must be an http(s) URL');
  const base = service.origin + service.pathname.replace(/\/+$/, '');
  if (typeof options.secret !== 'string' || !options.secret.trim()) throw new TypeError('deviceid proxy: secret is required (the project’s proxy secret)');
  const secret = options.secret.trim();
  const prefix = '/' + (options.pathPrefix ?? '/metrics').replace(/^\/+|\/+$/g, '');
  if (prefix === '/' || !/^[A-Za-z0-9/._~-]+$/.test(prefix)) throw new TypeError('deviceid proxy: pathPrefix must be a path such as /metrics');
  const cookieDomain = options.cookieDomain?.replace(/^\./, '');
  if (cookieDomain !== undefined && !HOST_NAME.test(cookieDomain)) throw new TypeError('deviceid proxy: cookieDomain must be a domain such as example.com');
  const timeoutMs = options.timeoutMs ?? 5000;
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const guarded = protection(options.protect);

  let agent: CachedAgent | null = null;
  /** The last error met on the way to the service, reported with the next identify that gets through. */
  let lastError: { code: ErrorCode; at: number } | null = null;

  const failed = (code: ErrorCode) => {
    lastError = { code, at: Date.now() };
  };

  /**
   * Calls the service with a time limit that covers its body too (a service
   * that stalls after its headers is as slow as one that never answers);
   * maps network failures to the answers a browser gets.
   */
  async function call(path: string, init: RequestInit): Promise<Answer | CoreResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const res = await doFetch(base + path, { ...init, signal: controller.signal, redirect: 'manual' });
      if (res.status >= 500) failed('service_error');
      return { res, body: new Uint8Array(await res.arrayBuffer()) };
    } catch {
      if (controller.signal.aborted) {
        failed('timeout');
        return json(504, `deviceid proxy: the service did not answer within ${timeoutMs} ms`, 'service_unavailable');
      }
      failed('unreachable');
      return json(502, 'deviceid proxy: the service could not be reached', 'service_unavailable');
    } finally {
      clearTimeout(timer);
    }
  }

  function passBack(res: Response): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const name of PASSED_BACK) {
      const v = res.headers.get(name);
      if (v !== null) out.push([name, v]);
    }
    const headers = res.headers as Headers & { getSetCookie?: (this: Headers) => string[] };
    const cookies = headers.getSetCookie ? headers.getSetCookie() : [res.headers.get('set-cookie') ?? ''];
    for (const c of cookies) {
      if (!c.startsWith(`${DEVICE_COOKIE}=`)) continue;
      const attributes = c.split(';').filter((a) => !/^\s*domain\s*=/i.test(a));
      out.push(['set-cookie', attributes.join(';') + (cookieDomain ? `; Domain=${cookieDomain}` : '')]);
    }
    return out;
  }

  async function identify(req: CoreRequest): Promise<CoreResponse> {
    const body = await req.body();
    if (body === null) return json(413, `Request body too large (limit ${BODY_LIMIT} bytes)`, 'body_too_large');
    const headers = new Headers();
    for (const name of FORWARDED) {
      const v = req.headers.get(name);
      if (v !== null && name !== 'if-none-match') headers.set(name, v);
    }
    const cookie = ourCookie(req.headers.get('cookie'));
    if (cookie) headers.set('cookie', cookie);
    headers.set(PROXY_HEADERS.secret, secret);
    if (req.clientIp) headers.set(PROXY_HEADERS.clientIp, req.clientIp);
    headers.set(PROXY_HEADERS.host, req.host);
    headers.set(PROXY_HEADERS.proto, req.proto);
    const report = lastError;
    if (report) headers.set(PROXY_HEADERS.error, `${report.code}; at=${report.at}`);
    // The one linkedId the service takes as evidence: the site's session's, never the page's.
    const linkedId = await req.linkedId?.();
    if (linkedId) headers.set(PROXY_HEADERS.linkedId, linkedId);
    // (A Uint8Array is a BodyInit; TypeScript's DOM types only say so of one over an ArrayBuffer.)
    const answer = await call('/v1/identify', { method: 'POST', headers, body: body as unknown as BodyInit });
    if (!('res' in answer)) return answer;
    const { res } = answer;
    // The report got through with this request (unless a newer error came meanwhile).
    if (res.status < 500 && lastError === report) lastError = null;
    return { status: res.status, headers: [...passBack(res), ['cache-control', 'no-store']], body: answer.body };
  }

  /** The agent script, from the cache while the service's max-age allows, revalidated with its ETag after that. */
  async function agentScript(): Promise<CachedAgent | CoreResponse> {
    const now = Date.now();
    if (agent && now - agent.checkedAt < agent.maxAgeMs) return agent;
    const headers = new Headers({ accept: 'text/javascript' });
    if (agent?.etag) headers.set('if-none-match', agent.etag);
    const answer = await call('/agent.js', { method: 'GET', headers });
    if (!('res' in answer) || (answer.res.status !== 200 && answer.res.status !== 304)) {
      // Stale is better than nothing while the service is away.
      if (agent) return agent;
      return 'res' in answer ? json(502, `deviceid proxy: the service answered ${answer.res.status} for the agent script`, 'service_unavailable') : answer;
    }
    const { res } = answer;
    const maxAge = /max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '');
    const maxAgeMs = maxAge ? Number(maxAge[1]) * 1000 : 300_000;
    if (res.status === 304 && agent) {
      agent = { ...agent, checkedAt: now, maxAgeMs };
      return agent;
    }
    agent = {
      body: answer.body,
      etag: res.headers.get('etag'),
      contentType: res.headers.get('content-type') ?? 'text/javascript; charset=utf-8',
      checkedAt: now,
      maxAgeMs,
    };
    return agent;
  }

  async function serveAgent(req: CoreRequest): Promise<CoreResponse> {
    const script = await agentScript();
    if (!('checkedAt' in script)) return script;
    const headers: Array<[string, string]> = [
      ['content-type', script.contentType],
      ['cache-control', `public, max-age=${Math.round(script.maxAgeMs / 1000)}`],
    ];
    if (script.etag) headers.push(['etag', script.etag]);
    const presented = req.headers.get('if-none-match');
    if (script.etag && presented?.split(',').some((t) => t.trim().replace(/^W\//, '') === script.etag)) return { status: 304, headers, body: null };
    return { status: 200, headers, body: req.method === 'HEAD' ? null : script.body };
  }

  /**
   * Claims a protected request's requestId with the secret key. Never
   * retried: a claim that reached the service used the requestId up.
   */
  async function guard(headers: Headers): Promise<Guarded> {
    const p = guarded!;
    const requestId = headers.get(p.header)?.trim() ?? '';
    if (requestId === '') return refused('missing');
    if (!REQUEST_ID.test(requestId)) return refused('unknown');
    const answer = await call(`/v1/events/${requestId}/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.secretKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ maxAgeSeconds: p.maxAgeSeconds }),
    });
    const unavailable = (outage: boolean): Guarded =>
      outage && p.failOpen
        ? { forward: [[DECISION_HEADERS.decision, 'unavailable']] }
        : { answer: json(503, 'The request could not be checked: try again', 'deviceid_unavailable') };
    // Unreachable or slow.
    if (!('res' in answer)) return unavailable(true);
    const { status } = answer.res;
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(answer.body));
    } catch {
      body = null;
    }
    const code = (body as { code?: unknown } | null)?.code;
    if (status === 409 && code === 'request_id_used') return refused('used');
    if (status === 410 && code === 'request_id_expired') return refused('expired');
    if (status === 404 && code === 'event_not_found') return refused('unknown');
    const claim = body as Claim | null;
    if (status !== 200 || typeof claim?.decision?.action !== 'string' || typeof claim.visitorId !== 'string') {
      // The service failing or busy, else a wrong key or address: refused whatever failOpen says.
      return unavailable(status >= 500 || status === 429);
    }
    if (claim.decision.action === 'block') return { answer: blockAnswer(claim) };
    const forward: Array<[string, string]> = [
      [DECISION_HEADERS.decision, claim.decision.action],
      [DECISION_HEADERS.visitorId, claim.visitorId],
      [DECISION_HEADERS.requestId, requestId],
      [DECISION_HEADERS.suspectScore, String(claim.suspectScore)],
    ];
    if (claim.decision.ruleId !== undefined) forward.push([DECISION_HEADERS.ruleId, claim.decision.ruleId]);
    return { forward };
  }

  return {
    protects: (method, path) => {
      if (guarded === null) return false;
      const canonical = canonicalPath(path);
      return guarded.paths.some(
        (p) => methodMatches(p.method, method) && (typeof p.path === 'string' ? p.path === canonical : p.path.test(path) || p.path.test(canonical)),
      );
    },
    strips: (name) => {
      if (guarded === null) return false;
      const n = name.toLowerCase();
      return n.startsWith('deviceid-') && n !== guarded.header;
    },
    guard: (headers) => {
      if (guarded === null) throw new Error('deviceid proxy: no protect option');
      return guard(headers);
    },
    owns: (path) => path === prefix || path.startsWith(prefix + '/'),
    async handle(req) {
      const rest = req.path.slice(prefix.length);
      if (rest === '/agent.js') {
        if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, 'Method not allowed', 'bad_request', [['allow', 'GET, HEAD']]);
        return serveAgent(req);
      }
      if (rest === '/v1/identify') {
        if (req.method !== 'POST') return json(405, 'Method not allowed', 'bad_request', [['allow', 'POST']]);
        return identify(req);
      }
      return json(404, 'Not found', 'not_found');
    },
  };
}

/** Reads a body stream up to BODY_LIMIT bytes; null beyond it. */
export async function readLimited(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array | null> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > BODY_LIMIT) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return concat(chunks, size);
}

export function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
