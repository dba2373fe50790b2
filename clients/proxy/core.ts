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

export interface Core {
  /** Whether the path is the proxy's (under its prefix). */
  owns(path: string): boolean;
  handle(req: CoreRequest): Promise<CoreResponse>;
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

  return {
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
