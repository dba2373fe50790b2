// The proxy as a standard fetch handler, `(request) => Promise<Response>`:
// Next.js route handlers, Cloudflare Workers, Deno, Bun, Node 18+. With the
// protect option it stands in front of the whole site: the proxy's paths are
// answered, every other request goes on to `protect.forward` (the site's
// origin), a protected one only after its requestId was claimed.
import { createCore, ipFromHeader, readLimited, type ClientIpSource, type CoreOptions, type CoreResponse, type ProtectOptions } from './core.js';

export interface ProxyHandlerProtectOptions extends ProtectOptions {
  /**
   * Sends a request on to the site's origin and answers what it answered:
   * on Cloudflare Workers `(request) => fetch(request)`; elsewhere e.g.
   * `(request) => fetch(new Request(originUrl + new URL(request.url).pathname, request))`.
   * Every request that is not the proxy's goes through it (protected or not),
   * without the browser's `deviceid-*` headers.
   */
  forward: (request: Request, info?: unknown) => Promise<Response>;
}

export interface ProxyHandlerOptions extends Omit<CoreOptions, 'protect'> {
  /** Protected paths: claimed here, a block answered here, the rest forwarded to the origin with the decision in `deviceid-*` headers. */
  protect?: ProxyHandlerProtectOptions;
  /**
   * Where the browser's address comes from: a header your platform sets
   * (`'cf-connecting-ip'` on Cloudflare, `{ header: 'x-forwarded-for', hops: 1 }`
   * behind one proxy, as on Vercel), or a function of the request and the
   * runtime's second argument. Default: the runtime's own (Deno's
   * `info.remoteAddr`, or `{ clientIp }` passed as the second argument).
   * Without an address the service refuses the call (400) and the dashboard
   * shows why.
   */
  clientIp?: ClientIpSource | ((request: Request, info?: unknown) => string | null | undefined);
  /**
   * The signed-in user's id, read from your own session for the request
   * (a cookie your server checks, never a value the page sends): sent to
   * the service as the visit's confirmed linkedId, the one identification
   * takes as evidence (1–256 characters). Absent or null: none.
   */
  linkedId?: (request: Request) => Promise<string | null | undefined> | string | null | undefined;
}

/** A fetch handler for the proxy's paths; any other path answers 404 (route only the prefix to it, or check `owns`), or goes to `protect.forward`. */
export type ProxyHandler = ((request: Request, info?: unknown) => Promise<Response>) & {
  /** Whether a path is the proxy's (under its prefix). */
  owns(pathname: string): boolean;
};

/** The runtime's address of the client: Deno's `info.remoteAddr.hostname`, or `{ clientIp }`. */
function runtimeIp(info: unknown): string | null {
  if (!info || typeof info !== 'object') return null;
  const i = info as { clientIp?: unknown; remoteAddr?: { hostname?: unknown } };
  if (typeof i.clientIp === 'string') return i.clientIp;
  return typeof i.remoteAddr?.hostname === 'string' ? i.remoteAddr.hostname : null;
}

/**
 * ```ts
 * // app/metrics/[...path]/route.ts (Next.js)
 * const proxy = createProxyHandler({ serviceUrl: 'https://deviceid.example.com', secret: process.env.DEVICEID_PROXY_SECRET!, clientIp: { header: 'x-forwarded-for' } });
 * export { proxy as GET, proxy as POST };
 * ```
 */
const toResponse = (answer: CoreResponse): Response => {
  const headers = new Headers();
  for (const [name, value] of answer.headers) headers.append(name, value);
  return new Response(answer.body as BodyInit | null, { status: answer.status, headers });
};

export function createProxyHandler(options: ProxyHandlerOptions): ProxyHandler {
  const forward = options.protect?.forward;
  if (options.protect && typeof forward !== 'function')
    throw new TypeError('deviceid proxy: protect.forward must send a request on to the site (e.g. (request) => fetch(request))');
  const core = createCore(options);
  const source = options.clientIp;

  /** A request of the site's: without the browser's deviceid-* headers, claimed first when protected, then forwarded. */
  async function site(request: Request, path: string, info: unknown): Promise<Response> {
    const headers = new Headers();
    request.headers.forEach((value, name) => {
      if (!core.strips(name)) headers.append(name, value);
    });
    if (core.protects(request.method, path)) {
      const guarded = await core.guard(headers);
      if ('answer' in guarded) return toResponse(guarded.answer);
      for (const [name, value] of guarded.forward) headers.set(name, value);
    }
    return forward!(new Request(request, { headers }), info);
  }

  const handler = async (request: Request, info?: unknown): Promise<Response> => {
    const url = new URL(request.url);
    if (forward && !core.owns(url.pathname)) return site(request, url.pathname, info);
    const clientIp =
      typeof source === 'function' ? (source(request, info) ?? null) : source !== undefined ? ipFromHeader(request.headers, source) : runtimeIp(info);
    const answer = core.owns(url.pathname)
      ? await core.handle({
          method: request.method,
          path: url.pathname,
          headers: request.headers,
          body: () => readLimited(request.body),
          clientIp,
          host: url.host,
          proto: url.protocol === 'https:' ? 'https' : 'http',
          ...(options.linkedId && { linkedId: () => options.linkedId!(request) }),
        })
      : { status: 404, headers: [['content-type', 'text/plain; charset=utf-8']] as Array<[string, string]>, body: 'Not found' };
    return toResponse(answer);
  };
  return Object.assign(handler, { owns: (pathname: string) => core.owns(pathname) });
}
