// The proxy as a standard fetch handler, `(request) => Promise<Response>`:
// Next.js route handlers, Cloudflare Workers, Deno, Bun, Node 18+.
import { createCore, ipFromHeader, readLimited, type ClientIpSource, type CoreOptions } from './core.js';

export interface ProxyHandlerOptions extends CoreOptions {
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

/** A fetch handler for the proxy's paths; any other path answers 404 (route only the prefix to it, or check `owns`). */
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
export function createProxyHandler(options: ProxyHandlerOptions): ProxyHandler {
  const core = createCore(options);
  const source = options.clientIp;
  const handler = async (request: Request, info?: unknown): Promise<Response> => {
    const url = new URL(request.url);
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
    const headers = new Headers();
    for (const [name, value] of answer.headers) headers.append(name, value);
    return new Response(answer.body as BodyInit | null, { status: answer.status, headers });
  };
  return Object.assign(handler, { owns: (pathname: string) => core.owns(pathname) });
}
