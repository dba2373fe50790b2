import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpFingerprint, type HttpRequestLike } from '../../../server/edge/httpFingerprint.js';

interface Capture extends HttpRequestLike {
  client: string;
  method: string;
}
const { captures } = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/edge/http-captures.json'), 'utf8')) as {
  captures: Capture[];
};
const capture = (client: string): Capture => {
  const c = captures.find((x) => x.client === client);
  if (!c) throw new Error(`no capture ${client}`);
  return structuredClone(c);
};

const CHROME_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

function setHeader(req: HttpRequestLike, name: string, value: string): HttpRequestLike {
  const raw = [...req.rawHeaders];
  const i = raw.findIndex((n, j) => j % 2 === 0 && n.toLowerCase() === name.toLowerCase());
  if (i === -1) raw.push(name, value);
  else raw[i + 1] = value;
  return { ...req, rawHeaders: raw };
}
function dropHeaders(req: HttpRequestLike, test: (lowerName: string) => boolean): HttpRequestLike {
  const raw: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (!test(req.rawHeaders[i]!.toLowerCase())) raw.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  return { ...req, rawHeaders: raw };
}
/** The Chromium fetch() capture as a headed Chrome sends it. */
const chromeFetch = (): HttpRequestLike => setHeader(capture('chromium-fetch-post'), 'User-Agent', CHROME_UA);

// Firefox 133 navigation, header order as Firefox sends it (hand-written: no Firefox on this machine).
const firefox: HttpRequestLike = {
  method: 'GET',
  httpVersion: '1.1',
  rawHeaders: [
    'Host',
    'example.com',
    'User-Agent',
    'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    'Accept',
    'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'Accept-Language',
    'en-US,en;q=0.5',
    'Accept-Encoding',
    'gzip, deflate, br, zstd',
    'Connection',
    'keep-alive',
    'Upgrade-Insecure-Requests',
    '1',
    'Sec-Fetch-Dest',
    'document',
    'Sec-Fetch-Mode',
    'navigate',
    'Sec-Fetch-Site',
    'none',
    'Sec-Fetch-User',
    '?1',
    'Priority',
    'u=0, i',
  ],
};

describe('classification of real clients (captured on this machine)', () => {
  it.each([
    ['curl', 'curl'],
    ['curl-post', 'curl'],
    ['wget', 'other_tool'],
    ['python-requests', 'python'],
    ['python-urllib', 'python'],
    ['node-fetch-undici', 'node'],
    ['go', 'go'],
    ['chromium-headless', 'headless'],
    ['chromium-fetch-post', 'headless'],
    // Node's http module sends no User-Agent at all: nothing to go on.
    ['node-http', 'unknown'],
  ])('%s → %s', (client, expected) => {
    expect(httpFingerprint(capture(client)).classification).toBe(expected);
  });

  it('calls a browser-shaped request with a browser User-Agent a browser', () => {
    expect(httpFingerprint(chromeFetch(), { secureContext: true }).classification).toBe('browser');
    expect(httpFingerprint(setHeader(capture('chromium-headless'), 'User-Agent', CHROME_UA)).classification).toBe('browser');
    expect(httpFingerprint(firefox, { secureContext: true }).classification).toBe('browser');
  });

  it('sees through a borrowed browser User-Agent by header shape', () => {
    const spoof = (client: string) => httpFingerprint(setHeader(capture(client), 'User-Agent', CHROME_UA)).classification;
    expect(spoof('curl')).toBe('curl');
    expect(spoof('python-requests')).toBe('python');
    expect(spoof('python-urllib')).toBe('python');
    expect(spoof('go')).toBe('go');
    expect(spoof('node-fetch-undici')).toBe('node');
    expect(spoof('wget')).toBe('other_tool');
  });

  it('calls a browser User-Agent without the headers every browser sends headless', () => {
    expect(httpFingerprint(dropHeaders(chromeFetch(), (n) => n === 'accept-language')).classification).toBe('headless');
    expect(httpFingerprint(dropHeaders(chromeFetch(), (n) => n === 'accept-encoding')).classification).toBe('headless');
    const noSecFetch = dropHeaders(chromeFetch(), (n) => n.startsWith('sec-fetch-'));
    expect(httpFingerprint(noSecFetch, { secureContext: true }).classification).toBe('headless');
    // Over plain HTTP browsers omit Sec-Fetch-*, so their absence proves nothing.
    expect(httpFingerprint(noSecFetch, { secureContext: false }).classification).toBe('browser');
    // A browser too old for Sec-Fetch is not blamed for lacking it.
    expect(httpFingerprint(setHeader(noSecFetch, 'User-Agent', CHROME_UA.replace('156', '70')), { secureContext: true }).classification).toBe('browser');
  });

  it('expects Sec-Fetch-* from Safari 16.4 on, read from "Version/x.y … Safari/"', () => {
    const safari = (version: string) =>
      `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${version} Safari/605.1.15`;
    const noSecFetch = (ua: string) =>
      setHeader(
        dropHeaders(chromeFetch(), (n) => n.startsWith('sec-fetch-')),
        'User-Agent',
        ua,
      );
    const classify = (ua: string) => httpFingerprint(noSecFetch(ua), { secureContext: true }).classification;
    expect(classify(safari('16.4'))).toBe('headless');
    expect(classify(safari('17.0'))).toBe('headless');
    expect(classify(safari('16.3'))).toBe('browser');
    expect(classify(safari('15.6'))).toBe('browser');
    // "Version/" without a later "Safari/" is not Safari.
    expect(classify('Mozilla/5.0 (X11; Linux x86_64) Safari/605.1.15 Version/17.0')).toBe('browser');
  });

  it('classifies a hostile 1 MB User-Agent in linear time (the Safari rule used to be quadratic)', () => {
    // Looks like a browser (so the Sec-Fetch rules run), then "Version/" over and over with no "Safari/" after.
    const hostile = 'Mozilla/5.0 (X11) Safari/1 ' + 'Version/1.1'.repeat(100_000);
    const started = performance.now();
    const req = setHeader(
      dropHeaders(chromeFetch(), (n) => n.startsWith('sec-fetch-')),
      'User-Agent',
      hostile,
    );
    expect(httpFingerprint(req, { secureContext: true }).classification).toBe('browser');
    // A safety bound, not a benchmark: the quadratic rule takes minutes here.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('knows a browser never sends all-lowercase names over HTTP/1.1, but always does over HTTP/2', () => {
    const lower = { ...chromeFetch(), rawHeaders: chromeFetch().rawHeaders.map((h, i) => (i % 2 === 0 ? h.toLowerCase() : h)) };
    expect(httpFingerprint(lower).classification).toBe('other_tool');
    expect(httpFingerprint({ ...lower, httpVersion: '2.0' }).classification).toBe('browser');
  });

  it.each([
    [
      'HeadlessChrome/120.0.0.0 in the UA',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
      'headless',
    ],
    ['python-httpx', 'python-httpx/0.27.0', 'python'],
    ['aiohttp', 'Python/3.12 aiohttp/3.9.5', 'python'],
    ['axios', 'axios/1.7.2', 'node'],
    ['node-fetch', 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', 'node'],
    ['okhttp', 'okhttp/4.12.0', 'other_tool'],
    ['Java', 'Java-http-client/21.0.2', 'other_tool'],
    ['libwww-perl', 'libwww-perl/6.72', 'other_tool'],
    ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'other_tool'],
    [
      'a phone named CUBOT',
      'Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
      'browser',
    ],
    ['an app', 'MyApp/2.1 (iPhone; iOS 17.0)', 'unknown'],
  ])('%s', (_, ua, expected) => {
    expect(httpFingerprint(setHeader(chromeFetch(), 'User-Agent', ua)).classification).toBe(expected);
  });
});

describe('fingerprint', () => {
  it('is readable and hash-suffixed', () => {
    expect(httpFingerprint(capture('curl')).fingerprint).toMatch(/^hfp1:1\.1:get:03:---m:[0-9a-f]{16}$/);
    expect(httpFingerprint(chromeFetch()).fingerprint).toMatch(/^hfp1:1\.1:post:15:lfcm:[0-9a-f]{16}$/);
    expect(httpFingerprint(capture('node-fetch-undici')).fingerprint).toMatch(/^hfp1:1\.1:get:07:lf-w:/);
  });

  it('differs between clients and between header orders', () => {
    const prints = new Set(captures.map((c) => httpFingerprint(c).fingerprint));
    expect(prints.size).toBe(captures.length);
    const c = capture('curl');
    const swapped = { ...c, rawHeaders: [...c.rawHeaders.slice(2, 4), ...c.rawHeaders.slice(0, 2), ...c.rawHeaders.slice(4)] };
    expect(httpFingerprint(swapped).fingerprint).not.toBe(httpFingerprint(c).fingerprint);
  });

  it('stays the same across visits: cookies, referers, languages and proxy headers do not count', () => {
    const base = httpFingerprint(chromeFetch()).fingerprint;
    let r = setHeader(chromeFetch(), 'Cookie', '_id=abc');
    r = setHeader(r, 'Referer', 'https://elsewhere.example/');
    r = setHeader(r, 'Accept-Language', 'de-DE,de;q=0.9');
    r = setHeader(r, 'X-Forwarded-For', '203.0.113.9');
    r = setHeader(r, 'X-JA4', 't13d1516h2_8daaf6152771_b186095e22b6');
    expect(httpFingerprint(r, { ignoreHeaders: ['x-ja4'] }).fingerprint).toBe(base);
    expect(httpFingerprint(r).fingerprint).not.toBe(base);
  });

  it('tolerates odd input', () => {
    expect(httpFingerprint({ httpVersion: 'x', rawHeaders: ['Host'] })).toEqual({
      fingerprint: expect.stringMatching(/^hfp1:\?:get:00:---w:/),
      classification: 'unknown',
    });
  });
});
