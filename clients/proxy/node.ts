// The proxy as Express/connect middleware over the same core: requests under
// the prefix are answered, every other one goes to `next()`; with the protect
// option, a protected one only after its requestId was claimed (a block
// answered here), with the decision in `deviceid-*` request headers.
import { BODY_LIMIT, concat, createCore, ipFromHeader, type ClientIpSource, type Core, type CoreOptions, type CoreResponse } from './core.js';

/** What the middleware reads of a Node request (an http.IncomingMessage, or Express's Request). */
export interface IncomingRequest {
  method?: string | undefined;
  url?: string | undefined;
  /** Express: the URL before a mount path was stripped. */
  originalUrl?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** Node's raw header list (name, value, name, value…): kept in step with `headers` when the protect option changes them. */
  rawHeaders?: string[] | undefined;
  socket?: { remoteAddress?: string | undefined; encrypted?: boolean | undefined } | undefined;
  /** Express: the client address (honours `trust proxy`). */
  ip?: string | undefined;
  /** Express: `https` or `http` (honours `trust proxy`). */
  protocol?: string | undefined;
  /** A body an earlier middleware already read (express.json(), express.raw()). */
  body?: unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
}

/** What the middleware writes (an http.ServerResponse, or Express's Response). */
export interface OutgoingResponse {
  statusCode: number;
  setHeader(name: string, value: string | string[]): unknown;
  end(body?: string | Uint8Array): unknown;
}

export interface ProxyMiddlewareOptions extends CoreOptions {
  /**
   * Where the browser's address comes from: a header a proxy in front of
   * you sets (`'cf-connecting-ip'`, `{ header: 'x-forwarded-for', hops: 1 }`),
   * or a function of the request. Default: Express's `req.ip` (set `trust
   * proxy` when you are behind one), else the socket's address.
   */
  clientIp?: ClientIpSource | ((req: IncomingRequest) => string | null | undefined);
  /**
   * The signed-in user's id, read from your own session for the request
   * (e.g. `req.session.userId` after your session middleware; never a value
   * the page sends): sent to the service as the visit's confirmed linkedId,
   * the one identification takes as evidence (1–256 characters). Absent or
   * null: none.
   */
  linkedId?: (req: IncomingRequest) => Promise<string | null | undefined> | string | null | undefined;
}

export type ProxyMiddleware = (req: IncomingRequest, res: OutgoingResponse, next: (err?: unknown) => void) => void;

function toHeaders(raw: IncomingRequest['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    // HTTP/2 pseudo-headers (:path) are no header a fetch Headers takes.
    if (name.startsWith(':')) continue;
    headers.set(name, Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : value);
  }
  return headers;
}

const encoder = new TextEncoder();

/** The body: what an earlier middleware parsed, or the stream read up to BODY_LIMIT (null beyond it). */
function bodyOf(req: IncomingRequest): Promise<Uint8Array | null> {
  const parsed = req.body;
  if (parsed instanceof Uint8Array) return Promise.resolve(parsed.byteLength > BODY_LIMIT ? null : parsed);
  if (typeof parsed === 'string' || (parsed !== undefined && parsed !== null && typeof parsed === 'object' && Object.keys(parsed).length)) {
    const bytes = encoder.encode(typeof parsed === 'string' ? parsed : JSON.stringify(parsed));
    return Promise.resolve(bytes.byteLength > BODY_LIMIT ? null : bytes);
  }
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
      size += bytes.byteLength;
      if (size > BODY_LIMIT) over = true;
      else chunks.push(bytes);
    });
    req.on('end', () => resolve(over ? null : concat(chunks, size)));
    req.on('error', reject);
  });
}

/**
 * ```ts
 * app.use(createProxyMiddleware({ serviceUrl: 'https://deviceid.example.com', secret: process.env.DEVICEID_PROXY_SECRET! }));
 * ```
 */
function send(res: OutgoingResponse, answer: CoreResponse): void {
  res.statusCode = answer.status;
  const cookies = answer.headers.filter(([n]) => n === 'set-cookie').map(([, v]) => v);
  for (const [name, value] of answer.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  if (cookies.length) res.setHeader('set-cookie', cookies);
  res.end(answer.body ?? undefined);
}

/** Removes the browser's `deviceid-*` headers (but the requestId's) and sets the decision's, in `headers` and `rawHeaders` alike. */
function rewrite(req: IncomingRequest, core: Core, add: Array<[string, string]>): void {
  for (const name of Object.keys(req.headers)) if (core.strips(name)) delete req.headers[name];
  for (const [name, value] of add) req.headers[name] = value;
  if (Array.isArray(req.rawHeaders)) {
    const names = new Set(add.map(([n]) => n));
    const kept: string[] = [];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      if (!core.strips(name) && !names.has(name.toLowerCase())) kept.push(name, req.rawHeaders[i + 1]!);
    }
    for (const [name, value] of add) kept.push(name, value);
    req.rawHeaders.splice(0, req.rawHeaders.length, ...kept);
  }
}

export function createProxyMiddleware(options: ProxyMiddlewareOptions): ProxyMiddleware {
  const core = createCore(options);
  const source = options.clientIp;
  return (req, res, next) => {
    const path = (req.originalUrl ?? req.url ?? '/').split('?')[0] ?? '/';
    if (!core.owns(path)) {
      if (!options.protect) return next();
      // No decision header of the browser's reaches the site, protected path or not.
      rewrite(req, core, []);
      if (!core.protects(req.method ?? 'GET', path)) return next();
      core
        .guard(toHeaders(req.headers))
        .then((guarded) => {
          if ('answer' in guarded) return send(res, guarded.answer);
          rewrite(req, core, guarded.forward);
          next();
        })
        .catch(next);
      return;
    }
    const headers = toHeaders(req.headers);
    const clientIp =
      typeof source === 'function'
        ? (source(req) ?? null)
        : source !== undefined
          ? ipFromHeader(headers, source)
          : (req.ip ?? req.socket?.remoteAddress ?? null);
    const proto = req.protocol === 'https' || (req.protocol === undefined && req.socket?.encrypted === true) ? 'https' : 'http';
    core
      .handle({
        method: req.method ?? 'GET',
        path,
        headers,
        body: () => bodyOf(req),
        clientIp,
        host: headers.get('host') ?? '',
        proto,
        ...(options.linkedId && { linkedId: () => options.linkedId!(req) }),
      })
      .then((answer) => send(res, answer))
      .catch(next);
  };
}
