// HTTP client fingerprint from the request's header list. Our own scheme
// (JA4H is under the FoxIO licence, which a hosted service cannot use):
//
//   hfp1:<version>:<method>:<count>:<flags>:<hash>
//   e.g. hfp1:1.1:post:12:lfcm:3e1c0b7a9d2f4c55
//
// count is the number of headers hashed; flags are l (accept-language), f
// (any sec-fetch-*), c (sec-ch-ua), each '-' when absent, then m when header
// names arrive in mixed case or w when all lowercase (HTTP/2 is always w);
// hash is the first 16 hex digits of sha256 over method, version, the
// lowercase header names in arrival order, and the Accept and
// Accept-Encoding values. Headers that vary per visit (cookie, referer,
// cache validators) or are added by proxies on the way are left out, so one
// client build gives one fingerprint.
import { createHash } from 'node:crypto';
import { HTTP_CLASSIFICATIONS } from '../../contract/edge.js';

export type HttpClassification = (typeof HTTP_CLASSIFICATIONS)[number];

export interface HttpRequestLike {
  method?: string | undefined;
  httpVersion: string;
  /** Names and values alternating, as Node's req.rawHeaders. */
  rawHeaders: string[];
}

export interface HttpFingerprintOptions {
  /**
   * The page origin is HTTPS (or localhost): modern browsers then always send
   * Sec-Fetch-*, so their absence marks automation. Leave false when unsure.
   */
  secureContext?: boolean;
  /** More header names to leave out, e.g. the TLS headers a trusted proxy adds. */
  ignoreHeaders?: readonly string[];
  /**
   * The request came through a first-party proxy (server/proxy/), which
   * forwards some of the browser's headers in its own order and case: the
   * fingerprint hashes the names sorted (flag `p` instead of m/w), and the
   * classification uses only the User-Agent, never the shape of the headers.
   */
  proxied?: boolean;
}

/** Headers a first-party proxy adds, or forwards of the browser's choosing but not in its order. */
const FIRST_PARTY_PROXY = /^(deviceid-proxy-.*|x-api-key|content-type|content-length|host|connection|origin)$/;

const VARYING = new Set(['cookie', 'referer', 'if-none-match', 'if-modified-since', 'cache-control', 'pragma', 'authorization']);
const PROXY_ADDED =
  /^(x-forwarded-.*|forwarded|via|x-real-ip|true-client-ip|cf-.*|cdn-loop|x-amzn-.*|x-amz-cf-.*|x-request-id|x-correlation-id|x-envoy-.*|x-cloud-trace-context|x-appengine-.*|fastly-.*|akamai-.*|x-azure-.*|x-arr-.*|x-original-.*)$/;

const HEADLESS_UA = /HeadlessChrome|PhantomJS|SlimerJS|Chrome-Lighthouse/i;
const PYTHON_UA = /python-requests|python-urllib|python-httpx|aiohttp|httpx\/|urllib3|Scrapy|^python\//i;
const GO_UA = /Go-http-client/i;
const NODE_UA = /^(node|undici)$|^node-fetch|^axios\/|^got\b|^undici\//i;
const OTHER_TOOL_UA =
  /^(Wget|okhttp|Java\/|Java-http-client|Apache-HttpClient|libwww-perl|lwp-|PostmanRuntime|insomnia|HTTPie|Ruby|Faraday|Dart\/|reqwest|WinHttp|Mozilla\/\d\.\d \(Windows NT[^)]*\) WindowsPowerShell)|PowerShell\/|(bot|crawler|spider)\/\d/i;
const BROWSER_UA = /^Mozilla\/5\.0 \(.*\b(Chrome|Chromium|Firefox|Safari|Edg|OPR)\/\d/;

/** Minimum versions that send Sec-Fetch-* to secure origins: Chromium 76, Firefox 90, Safari 16.4. */
function sendsSecFetch(ua: string): boolean {
  const chrome = /Chrome\/(\d+)/.exec(ua);
  if (chrome) return Number(chrome[1]) >= 76;
  const firefox = /Firefox\/(\d+)/.exec(ua);
  if (firefox) return Number(firefox[1]) >= 90;
  // Not /Version\/(\d+)\.(\d+).*Safari\//: `.*` after each "Version/" is quadratic on a hostile UA.
  const safari = /Version\/(\d+)\.(\d+)/.exec(ua);
  if (safari && ua.includes('Safari/', safari.index)) return Number(safari[1]) > 16 || (Number(safari[1]) === 16 && Number(safari[2]) >= 4);
  return false;
}

function startsWith(names: readonly string[], prefix: readonly string[]): boolean {
  return prefix.every((n, i) => names[i] === n);
}

/**
 * Tools recognised by the exact header names and order they send on HTTP/1.x
 * (captured from the real clients; see test/fixtures/edge/http-captures.json),
 * so a borrowed browser User-Agent does not hide them. A proxy in front
 * rewrites order and case; then only the User-Agent rules apply.
 */
function toolByShape(raw: readonly string[], value: (name: string) => string | undefined): HttpClassification | null {
  const has = (name: string): boolean => value(name) !== undefined;
  // undici (Node's fetch) lowercases every name and sends "accept-language: *".
  if (raw.every((n) => n === n.toLowerCase()) && value('accept-language') === '*') return 'node';
  if (startsWith(raw, ['Host', 'User-Agent', 'Accept']) && !has('accept-encoding') && !has('accept-language') && !has('connection')) {
    return 'curl';
  }
  if (startsWith(raw, ['Host', 'User-Agent', 'Accept-Encoding', 'Accept', 'Connection'])) return 'python';
  if (startsWith(raw, ['Accept-Encoding', 'Host', 'User-Agent', 'Connection'])) return 'python';
  if (startsWith(raw, ['Host', 'User-Agent']) && raw.at(-1) === 'Accept-Encoding' && value('accept-encoding') === 'gzip' && !has('accept-language')) {
    return 'go';
  }
  if (startsWith(raw, ['Host', 'User-Agent', 'Accept', 'Accept-Encoding', 'Connection']) && value('accept-encoding') === 'identity') {
    return 'other_tool'; // wget
  }
  return null;
}

export function httpFingerprint(req: HttpRequestLike, opts: HttpFingerprintOptions = {}): { fingerprint: string; classification: HttpClassification } {
  const ignore = new Set((opts.ignoreHeaders ?? []).map((n) => n.toLowerCase()));
  const raw: string[] = [];
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (!values.has(lower)) values.set(lower, req.rawHeaders[i + 1]!);
    if (VARYING.has(lower) || PROXY_ADDED.test(lower) || ignore.has(lower)) continue;
    if (opts.proxied && FIRST_PARTY_PROXY.test(lower)) continue;
    raw.push(name);
  }
  const value = (name: string): string | undefined => values.get(name);
  const names = opts.proxied ? raw.map((n) => n.toLowerCase()).sort() : raw.map((n) => n.toLowerCase());
  const method = (req.method ?? 'GET').toLowerCase().slice(0, 10);
  const version = /^\d(\.\d)?$/.test(req.httpVersion) ? req.httpVersion : '?';
  const h1 = version.startsWith('1');
  const hasSecFetch = names.some((n) => n.startsWith('sec-fetch-'));
  const flags =
    (values.has('accept-language') ? 'l' : '-') +
    (hasSecFetch ? 'f' : '-') +
    (values.has('sec-ch-ua') ? 'c' : '-') +
    (opts.proxied ? 'p' : raw.every((n) => n === n.toLowerCase()) ? 'w' : 'm');
  const hash = createHash('sha256')
    .update([method, version, names.join(','), value('accept') ?? '', value('accept-encoding') ?? ''].join('\n'))
    .digest('hex')
    .slice(0, 16);
  const fingerprint = `hfp1:${version}:${method}:${String(Math.min(names.length, 99)).padStart(2, '0')}:${flags}:${hash}`;
  return { fingerprint, classification: opts.proxied ? byUserAgent(value) : classify(raw, value, h1, hasSecFetch, opts.secureContext ?? false) };
}

/** A client that names itself in the User-Agent (or sec-ch-ua): a headless browser or a tool. */
function namedByUserAgent(value: (name: string) => string | undefined): HttpClassification | null {
  const ua = value('user-agent') ?? '';
  if (HEADLESS_UA.test(ua) || /HeadlessChrome/.test(value('sec-ch-ua') ?? '')) return 'headless';
  if (/^curl\//i.test(ua)) return 'curl';
  if (PYTHON_UA.test(ua)) return 'python';
  if (GO_UA.test(ua)) return 'go';
  if (NODE_UA.test(ua)) return 'node';
  if (OTHER_TOOL_UA.test(ua)) return 'other_tool';
  return null;
}

/** A proxied request: the forwarded User-Agent's rules only. */
function byUserAgent(value: (name: string) => string | undefined): HttpClassification {
  return namedByUserAgent(value) ?? (BROWSER_UA.test(value('user-agent') ?? '') ? 'browser' : 'unknown');
}

function classify(
  raw: readonly string[],
  value: (name: string) => string | undefined,
  h1: boolean,
  hasSecFetch: boolean,
  secureContext: boolean,
): HttpClassification {
  const ua = value('user-agent') ?? '';
  const named = namedByUserAgent(value);
  if (named) return named;
  const shape = h1 ? toolByShape(raw, value) : null;
  if (shape) return shape;
  if (!BROWSER_UA.test(ua)) return 'unknown';
  // A browser never sends all-lowercase names on HTTP/1.x.
  if (h1 && raw.every((n) => n === n.toLowerCase())) return 'other_tool';
  // Every browser sends these on every request; automation often does not.
  if (value('accept-language') === undefined || value('accept-encoding') === undefined) return 'headless';
  if (secureContext && !hasSecFetch && sendsSecFetch(ua)) return 'headless';
  return 'browser';
}
