// Web Bot Auth verification (server/bots/webBotAuth.ts) against a key
// directory served from 127.0.0.1, with real Ed25519 signatures and an
// injected clock.
import { lookup } from 'node:dns/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIRECTORY_MEDIA_TYPE, DIRECTORY_PATH, WebBotAuth, type WebBotAuthOptions } from '../../../server/bots/webBotAuth.js';
import { directoryJson, makeAgentKey, signRequest, type SignOptions } from '../../support/webBotAuth.js';

const T0 = Date.UTC(2026, 10, 28, 12, 0, 0);
const S0 = T0 / 1000;
const key = makeAgentKey();
const otherKey = makeAgentKey();

type Mode = 'ok' | 'hang' | 'garbage' | 'huge' | 'huge-chunked' | 'status-500' | 'redirect' | 'html';
let mode: Mode = 'ok';
let cacheControl: string | undefined;
let requests = 0;
let connections = 0;
let server: Server;
let agent: string;
let agentHost: string;

beforeAll(async () => {
  server = createServer((req, res: ServerResponse) => {
    requests++;
    res.setHeader('connection', 'close'); // each test closes the server's sockets: no keep-alive across them
    if (req.url !== DIRECTORY_PATH) return void res.writeHead(404).end();
    const headers: Record<string, string> = { 'content-type': DIRECTORY_MEDIA_TYPE };
    if (cacheControl !== undefined) headers['cache-control'] = cacheControl;
    switch (mode) {
      case 'ok':
        return void res.writeHead(200, headers).end(directoryJson([key]));
      case 'hang':
        return; // never answers
      case 'garbage':
        return void res.writeHead(200, headers).end('{"keys": [ not json');
      case 'huge':
        return void res.writeHead(200, headers).end(JSON.stringify({ keys: [key.jwk], pad: 'x'.repeat(100_000) }));
      case 'huge-chunked': {
        res.writeHead(200, headers); // no content-length: the cap must hold on the stream
        for (let i = 0; i < 20; i++) res.write(' '.repeat(8192));
        return void res.end(directoryJson([key]));
      }
      case 'status-500':
        return void res.writeHead(500, headers).end(directoryJson([key]));
      case 'redirect':
        return void res.writeHead(302, { location: DIRECTORY_PATH }).end();
      case 'html':
        return void res.writeHead(200, { 'content-type': 'text/html' }).end(directoryJson([key]));
    }
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  agentHost = `127.0.0.1:${port}`;
  agent = `http://${agentHost}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  mode = 'ok';
  cacheControl = undefined;
  requests = 0;
  connections = 0;
  server.closeAllConnections();
});

let now = T0;
function verifier(opts: Partial<WebBotAuthOptions> = {}): WebBotAuth {
  now = T0;
  return new WebBotAuth({ now: () => now, allowHttp: true, ...opts });
}

function signed(o: Partial<SignOptions> = {}) {
  return signRequest({ key, agent, authority: 'api.example.com', created: S0, expires: S0 + 300, ...o });
}

describe('WebBotAuth', () => {
  it('accepts a valid signature and names the agent host and key', async () => {
    const v = verifier();
    expect(await v.verify(signed())).toEqual({ result: 'signed', agent: agentHost, keyId: key.keyId });
    // The bare-String Signature-Agent of earlier drafts, and a signature covering @method and @path too.
    expect(await v.verify(signed({ legacyAgent: true }))).toMatchObject({ result: 'signed' });
    expect(await v.verify(signed({ components: ['"@method"', '"@authority"', '"@path"', '"signature-agent";key="sig1"'] }))).toMatchObject({
      result: 'signed',
    });
  });

  it('returns null for a request without signature headers', async () => {
    const v = verifier();
    expect(await v.verify({ method: 'POST', authority: 'api.example.com', path: '/', headers: { host: 'api.example.com' } })).toBeNull();
    expect(requests).toBe(0);
    // Half a signature is not "unsigned".
    const { signature: _s, ...onlyInput } = signed().headers;
    expect(await v.verify({ ...signed(), headers: onlyInput })).toMatchObject({ result: 'invalid', reason: 'malformed' });
  });

  it('refuses tampered requests: authority, path, signature byte, agent', async () => {
    const v = verifier();
    expect(await v.verify({ ...signed(), authority: 'evil.example.com' })).toMatchObject({ result: 'invalid', agent: agentHost, reason: 'bad-signature' });
    const withPath = signed({ components: ['"@authority"', '"@path"', '"signature-agent";key="sig1"'], path: '/v1/identify' });
    expect(await v.verify({ ...withPath, path: '/v1/other' })).toMatchObject({ result: 'invalid', reason: 'bad-signature' });
    const req = signed();
    const sig = Buffer.from(/:(.*):/.exec(req.headers.signature as string)![1]!, 'base64');
    sig[10]! ^= 1;
    expect(await v.verify({ ...req, headers: { ...req.headers, signature: `sig1=:${sig.toString('base64')}:` } })).toMatchObject({
      result: 'invalid',
      reason: 'bad-signature',
    });
  });

  it('refuses an expired signature, one created in the future beyond the skew, and one valid too long', async () => {
    const v = verifier();
    now = T0 + 301_000;
    expect(await v.verify(signed())).toMatchObject({ result: 'invalid', reason: 'expired' });
    now = T0;
    expect(await v.verify(signed({ created: S0 + 90, expires: S0 + 400 }))).toMatchObject({ result: 'invalid', reason: 'created-in-future' });
    expect(await v.verify(signed({ created: S0 + 30, expires: S0 + 400 }))).toMatchObject({ result: 'signed' }); // within the 60 s skew
    expect(await v.verify(signed({ expires: S0 + 25 * 3600 }))).toMatchObject({ result: 'invalid', reason: 'validity-too-long' });
    expect(await v.verify(signed({ expires: S0 + 23 * 3600 }))).toMatchObject({ result: 'signed' });
  });

  it('refuses a key the directory does not hold, and a keyid that is not the signing key', async () => {
    const v = verifier();
    expect(await v.verify(signed({ key: otherKey }))).toMatchObject({ result: 'invalid', agent: agentHost, reason: 'unknown-key' });
    expect(await v.verify(signed({ key: otherKey, keyIdOverride: key.keyId }))).toMatchObject({ result: 'invalid', reason: 'bad-signature' });
  });

  it('refuses a replayed signature, and a reused nonce', async () => {
    const v = verifier();
    const req = signed();
    expect(await v.verify(req)).toMatchObject({ result: 'signed' });
    expect(await v.verify(req)).toMatchObject({ result: 'invalid', reason: 'replayed' });
    const a = signed({ nonce: 'same-nonce', path: '/a', components: ['"@authority"', '"@path"', '"signature-agent";key="sig1"'] });
    const b = signed({ nonce: 'same-nonce', path: '/b', components: ['"@authority"', '"@path"', '"signature-agent";key="sig1"'] });
    expect(await v.verify(a)).toMatchObject({ result: 'signed' });
    expect(await v.verify(b)).toMatchObject({ result: 'invalid', reason: 'replayed' });
    // A tampered copy sent first does not burn the genuine signature.
    const genuine = signed();
    expect(await v.verify({ ...genuine, authority: 'evil.example.com' })).toMatchObject({ reason: 'bad-signature' });
    expect(await v.verify(genuine)).toMatchObject({ result: 'signed' });
  });

  it('answers invalid within the time limit when the directory never answers, and does not ask again at once', async () => {
    mode = 'hang';
    const v = verifier({ timeoutMs: 200 });
    const started = performance.now();
    const results = await Promise.all([v.verify(signed()), v.verify(signed())]);
    expect(performance.now() - started).toBeLessThan(200 + 400);
    for (const r of results) expect(r).toMatchObject({ result: 'invalid', agent: agentHost, reason: 'directory-timeout' });
    expect(requests).toBe(1);
    const again = performance.now();
    expect(await v.verify(signed())).toMatchObject({ result: 'invalid', reason: 'directory-timeout' });
    expect(performance.now() - again).toBeLessThan(100);
    expect(requests).toBe(1);
    // Past the negative-cache window it asks again.
    now += 31_000;
    mode = 'ok';
    expect(await v.verify(signed({ created: S0 + 31, expires: S0 + 331 }))).toMatchObject({ result: 'signed' });
    expect(requests).toBe(2);
  });

  it('bounds the time limit even when the fetch ignores the abort signal', async () => {
    const v = verifier({ timeoutMs: 100, fetch: () => new Promise<Response>(() => undefined) });
    const started = performance.now();
    expect(await v.verify(signed())).toMatchObject({ result: 'invalid', reason: 'directory-timeout' });
    expect(performance.now() - started).toBeLessThan(100 + 400);
  });

  it.each([
    ['garbage', 'directory-invalid'],
    ['huge', 'directory-too-large'],
    ['huge-chunked', 'directory-too-large'],
    ['status-500', 'directory-unreachable'],
    ['redirect', 'directory-unreachable'],
    ['html', 'directory-invalid'],
  ] as const)('refuses a directory answering %s (%s)', async (m, reason) => {
    mode = m;
    expect(await verifier().verify(signed())).toEqual({ result: 'invalid', agent: agentHost, reason });
  });

  it('never throws, whatever the headers or the fetch do', async () => {
    const v = verifier({ fetch: () => Promise.reject(new Error('boom')) });
    const base = signed();
    const odd: Record<string, string | string[] | undefined>[] = [
      { signature: 'sig1=:AAAA:', 'signature-input': '((((' },
      { signature: 'sig1=:AAAA:', 'signature-input': 'sig1=("@authority");tag="web-bot-auth"', 'signature-agent': 'sig1=("x")' },
      { ...base.headers, 'signature-agent': 'sig1="not a url"' },
      { ...base.headers, 'signature-agent': ['sig1="https://a.example"', 'sig1=1'] },
      { ...base.headers, 'signature-input': (base.headers['signature-input'] as string).replace('web-bot-auth', 'other') },
      { ...base.headers, 'signature-input': (base.headers['signature-input'] as string).replace(/;created=\d+/, '') },
    ];
    for (const headers of odd) {
      const r = await v.verify({ ...base, headers });
      expect(r).toMatchObject({ result: 'invalid' });
    }
    expect(await v.verify(signed())).toMatchObject({ result: 'invalid', reason: 'directory-unreachable' });
    expect(await v.verify({ ...base, authority: 'bad host\u0000' })).toMatchObject({ result: 'invalid' });
  });

  it('requires @authority (or @target-uri) and the Signature-Agent member to be covered', async () => {
    const v = verifier();
    expect(await v.verify(signed({ components: ['"signature-agent";key="sig1"'] }))).toMatchObject({ reason: 'authority-not-covered' });
    expect(await v.verify(signed({ components: ['"@authority"'] }))).toMatchObject({ reason: 'signature-agent-not-covered' });
    expect(await v.verify(signed({ components: ['"@target-uri"', '"signature-agent";key="sig1"'] }))).toMatchObject({ result: 'signed' });
    expect(requests).toBe(1);
  });

  it('takes only the web-bot-auth tag and the ed25519 algorithm', async () => {
    const v = verifier();
    expect(await v.verify(signed({ tag: 'something-else' }))).toMatchObject({ reason: 'not-web-bot-auth' });
    expect(await v.verify(signed({ alg: 'rsa-pss-sha512' }))).toMatchObject({ reason: 'unsupported-algorithm' });
    const { 'signature-agent': _a, ...noAgent } = signed().headers;
    expect(await v.verify({ ...signed(), headers: noAgent })).toMatchObject({ reason: 'missing-signature-agent' });
  });

  describe('without allowHttp (production rules)', () => {
    const production = (fetch = vi.fn<typeof globalThis.fetch>()) => ({ v: new WebBotAuth({ now: () => T0, fetch, timeoutMs: 1000 }), fetch });

    it.each([
      ['an IP literal', () => `https://${agentHost}`],
      ['localhost', () => `https://localhost:${agentHost.split(':')[1]}`],
      ['an IPv6 literal', () => 'https://[::1]'],
      // Public literals too: an agent is named by a domain, and the literal check must not lean on the address check.
      ['a public IPv4 literal', () => 'https://8.8.8.8'],
      ['a public IPv6 literal', () => 'https://[2001:4860:4860::8888]'],
    ])('refuses %s without any fetch', async (_what, url) => {
      const { v, fetch } = production();
      expect(await v.verify(signed({ agent: url() }))).toMatchObject({ result: 'invalid', reason: 'forbidden-signature-agent' });
      expect(fetch).not.toHaveBeenCalled();
      expect(connections).toBe(0);
    });

    it.each([
      ['http', () => agent],
      ['userinfo', () => 'https://user@agent.example'],
      ['a path', () => 'https://agent.example/keys'],
      ['a query', () => 'https://agent.example/?a=1'],
    ])('refuses an agent with %s', async (_what, url) => {
      const { v, fetch } = production();
      expect(await v.verify(signed({ agent: url() }))).toMatchObject({ result: 'invalid', reason: 'bad-signature-agent' });
      expect(fetch).not.toHaveBeenCalled();
    });

    it('refuses a name that resolves to a loopback or private address, before fetching', async (ctx) => {
      // A name from /etc/hosts (the machine's own name) that resolves to 127.x: no DNS needed.
      const name = hostname();
      const resolved = await lookup(name, { all: true }).catch(() => []);
      if (name.includes(':') || resolved.length === 0 || !resolved.every((a) => a.address.startsWith('127.') || a.address === '::1')) ctx.skip();
      const { v, fetch } = production();
      expect(await v.verify(signed({ agent: `https://${name}:${agentHost.split(':')[1]}` }))).toMatchObject({
        result: 'invalid',
        reason: 'forbidden-signature-agent',
      });
      expect(fetch).not.toHaveBeenCalled();
      expect(connections).toBe(0);
    });
  });

  describe('directory cache', () => {
    it('fetches the directory once for many verifications, again once stale', async () => {
      const v = verifier({ cacheTtlMs: 600_000 });
      for (let i = 0; i < 5; i++) expect(await v.verify(signed())).toMatchObject({ result: 'signed' });
      expect(requests).toBe(1);
      now = T0 + 599_000;
      expect(await v.verify(signed({ created: S0 + 599, expires: S0 + 900 }))).toMatchObject({ result: 'signed' });
      expect(requests).toBe(1);
      now = T0 + 601_000;
      expect(await v.verify(signed({ created: S0 + 601, expires: S0 + 900 }))).toMatchObject({ result: 'signed' });
      expect(requests).toBe(2);
    });

    it('shares one fetch among concurrent verifications', async () => {
      const v = verifier();
      const results = await Promise.all(Array.from({ length: 8 }, () => v.verify(signed())));
      for (const r of results) expect(r).toEqual({ result: 'signed', agent: agentHost, keyId: key.keyId });
      expect(requests).toBe(1);
    });

    it("honours the directory's max-age", async () => {
      cacheControl = 'public, max-age=120';
      const v = verifier();
      expect(await v.verify(signed())).toMatchObject({ result: 'signed' });
      now = T0 + 119_000;
      expect(await v.verify(signed({ created: S0 + 119, expires: S0 + 400 }))).toMatchObject({ result: 'signed' });
      expect(requests).toBe(1);
      now = T0 + 121_000;
      expect(await v.verify(signed({ created: S0 + 121, expires: S0 + 400 }))).toMatchObject({ result: 'signed' });
      expect(requests).toBe(2);
    });

    it('keeps a good directory when a refresh fails, and drops a key the directory no longer lists', async () => {
      cacheControl = 'max-age=60';
      const v = verifier();
      expect(await v.verify(signed())).toMatchObject({ result: 'signed' });
      now = T0 + 61_000;
      mode = 'status-500';
      expect(await v.verify(signed({ created: S0 + 61, expires: S0 + 400 }))).toMatchObject({ result: 'signed' });
      expect(requests).toBe(2);
      now = T0 + 92_000; // past the negative window: refetch, and the directory now lists another key only
      mode = 'ok';
      server.removeAllListeners('request');
      server.on('request', (_req, res: ServerResponse) => {
        requests++;
        res.writeHead(200, { 'content-type': DIRECTORY_MEDIA_TYPE, connection: 'close' }).end(directoryJson([otherKey]));
      });
      try {
        expect(await v.verify(signed({ created: S0 + 92, expires: S0 + 400 }))).toMatchObject({ reason: 'unknown-key' });
        expect(await v.verify(signed({ key: otherKey, created: S0 + 92, expires: S0 + 400 }))).toMatchObject({ result: 'signed' });
      } finally {
        server.removeAllListeners('request');
        server.on('request', originalHandler);
      }
    });
  });
});

let originalHandler: (...args: any[]) => void;
beforeAll(() => {
  originalHandler = server.listeners('request')[0] as (...args: any[]) => void;
});
