import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_TLS_FACTS, tlsFacts, trackTls, type TlsFacts } from '../../../server/edge/tls.js';

const HEADERS = { ja4: 'X-JA4', cipher: 'X-TLS-Cipher', version: 'X-TLS-Version' };
const hasCurl = spawnSync('curl', ['--version']).status === 0;

describe('TLS facts from our own TLS termination', () => {
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-tls-'));
  let cert: string;
  let server: https.Server;
  let url: string;

  beforeAll(async () => {
    const r = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = trackTls(
      https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
        // ?trusted pretends the peer is a trusted proxy.
        const trusted = req.url?.includes('trusted') ?? false;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(tlsFacts(req, trusted, HEADERS)));
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const nodeGet = (path: string, headers: Record<string, string> = {}): Promise<TlsFacts> =>
    new Promise((resolve, reject) => {
      https
        .get(`${url}${path}`, { ca: cert, headers, agent: false }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(JSON.parse(body) as TlsFacts));
        })
        .on('error', reject);
    });

  it('reads cipher and version from the socket and JA4 from the ClientHello', async () => {
    const facts = await nodeGet('/');
    expect(facts.version).toBe('TLSv1.3');
    expect(facts.cipher).toMatch(/^TLS_(AES_\d+_GCM_SHA\d+|CHACHA20_POLY1305_SHA256)$/);
    expect(facts.ja4).toMatch(/^t13[di]\d{4}[0-9a-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$/);
  });

  it('gives the same JA4 to the same client', async () => {
    expect((await nodeGet('/')).ja4).toBe((await nodeGet('/')).ja4);
  });

  it.skipIf(!hasCurl)('tells curl from Node by JA4', async () => {
    const { stdout } = await promisify(execFile)('curl', ['-sk', '--max-time', '10', `${url}/`]);
    const curl = JSON.parse(stdout) as TlsFacts;
    expect(curl.ja4).toMatch(/^t13[di]\d{4}(h2|h1)_[0-9a-f]{12}_[0-9a-f]{12}$/);
    expect(curl.ja4).not.toBe((await nodeGet('/')).ja4);
  });

  it('does not take a TLS socket from a trusted proxy for the client, nor client-sent headers for facts', async () => {
    // The peer is "the proxy": its socket describes the proxy's TLS, not the client's.
    expect(await nodeGet('/?trusted')).toEqual(NO_TLS_FACTS);
    // Untrusted peer: headers are ignored, the socket speaks.
    const direct = await nodeGet('/', { 'X-JA4': 't13d1516h2_8daaf6152771_b186095e22b6' });
    expect(direct.ja4).not.toBe('t13d1516h2_8daaf6152771_b186095e22b6');
  });
});

describe('TLS facts without TLS', () => {
  it('are unknown on a plain HTTP connection', async () => {
    const server = http.createServer((req, res) => res.end(JSON.stringify(tlsFacts(req, false, HEADERS))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const body = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-ja4': 't13d1516h2_8daaf6152771_b186095e22b6' } })).json();
    await new Promise((resolve) => server.close(resolve));
    expect(body).toEqual(NO_TLS_FACTS);
  });
});

describe('TLS facts forwarded by a trusted proxy', () => {
  const plain = new Socket();
  const req = (headers: Record<string, string | string[] | undefined>) => ({ socket: plain, headers });
  const good = { 'x-ja4': 't13d1516h2_8daaf6152771_b186095e22b6', 'x-tls-cipher': 'TLS_AES_128_GCM_SHA256', 'x-tls-version': 'TLSv1.3' };

  it('reads the configured headers only when the peer is trusted', () => {
    expect(tlsFacts(req(good), true, HEADERS)).toEqual({ ja4: good['x-ja4'], cipher: 'TLS_AES_128_GCM_SHA256', version: 'TLSv1.3' });
    expect(tlsFacts(req(good), false, HEADERS)).toEqual(NO_TLS_FACTS);
    expect(tlsFacts(req(good), true, {})).toEqual(NO_TLS_FACTS);
    expect(tlsFacts(req({}), true, HEADERS)).toEqual(NO_TLS_FACTS);
  });

  it.each([
    ['TLS 1.2', 'TLSv1.2'],
    ['tls1.3', 'TLSv1.3'],
    ['1.3', 'TLSv1.3'],
    ['TLSv1', 'TLSv1'],
    ['SSLv3', null],
    ['TLSv1.3, TLSv1.3', null],
  ])('normalises version %j → %j', (v, expected) => {
    expect(tlsFacts(req({ 'x-tls-version': v }), true, HEADERS).version).toBe(expected);
  });

  it('does not believe malformed or doubled values', () => {
    const bad = tlsFacts(req({ 'x-ja4': 'not-a-ja4', 'x-tls-cipher': 'AES; DROP TABLE', 'x-tls-version': 'TLSv9' }), true, HEADERS);
    expect(bad).toEqual(NO_TLS_FACTS);
    // What a proxy that appends instead of replacing produces from a client-sent copy.
    const doubled = `${good['x-ja4']}, t13d1516h2_000000000000_000000000000`;
    expect(tlsFacts(req({ 'x-ja4': doubled }), true, HEADERS).ja4).toBeNull();
    expect(tlsFacts(req({ 'x-ja4': [good['x-ja4'], good['x-ja4']] }), true, HEADERS).ja4).toBeNull();
  });
});
