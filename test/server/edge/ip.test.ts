import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TrustProxy } from '../../../server/config.js';
import { normalizeIp, type Ip } from '../../../server/edge/address.js';
import { clientIp, isPrivateOrReserved, isTrustedPeer } from '../../../server/edge/ip.js';

const ip = (s: string): Ip => {
  const n = normalizeIp(s);
  if (!n) throw new Error(`test address ${s} does not parse`);
  return n;
};

describe('isPrivateOrReserved', () => {
  it.each([
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '127.0.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '224.0.0.251',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '3fff::1',
    '64:ff9b:1::1',
    '100::1',
  ])('%s is reserved', (s) => {
    expect(isPrivateOrReserved(ip(s))).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '2001:4860:4860::8888',
    '2606:4700::1',
    '64:ff9b::808:808',
    '2002:c000:204::1',
  ])('%s is public', (s) => {
    expect(isPrivateOrReserved(ip(s))).toBe(false);
  });
});

describe('clientIp', () => {
  const none: TrustProxy = { hops: 0, cidrs: [] };
  const oneHop: TrustProxy = { hops: 1, cidrs: [] };
  const threeHops: TrustProxy = { hops: 3, cidrs: [] };
  const proxies: TrustProxy = { hops: 0, cidrs: ['10.0.0.0/8', '2001:db8:ffff::/48'] };
  const req = (socketAddress: string, headers: Record<string, string | string[] | undefined> = {}) => ({ socketAddress, headers });

  it('is the socket peer when no proxy is trusted, whatever the headers say', () => {
    expect(clientIp(req('203.0.113.7', { 'x-forwarded-for': '8.8.8.8' }), none)).toEqual(ip('203.0.113.7'));
    expect(clientIp(req('::ffff:203.0.113.7', { forwarded: 'for=8.8.8.8' }), none)).toEqual(ip('203.0.113.7'));
    expect(clientIp(req('203.0.113.7', { 'x-forwarded-for': '8.8.8.8' }), proxies)).toEqual(ip('203.0.113.7'));
  });

  it('takes exactly `hops` entries from the right', () => {
    const h = { 'x-forwarded-for': '1.1.1.1, 8.8.8.8, 9.9.9.9' };
    expect(clientIp(req('10.0.0.2', h), oneHop)).toEqual(ip('9.9.9.9'));
    expect(clientIp(req('10.0.0.2', h), { hops: 2, cidrs: [] })).toEqual(ip('8.8.8.8'));
    expect(clientIp(req('10.0.0.2', h), { hops: 3, cidrs: [] })).toEqual(ip('1.1.1.1'));
    // Fewer entries than hops: the furthest address known.
    expect(clientIp(req('10.0.0.2', h), { hops: 9, cidrs: [] })).toEqual(ip('1.1.1.1'));
    expect(clientIp(req('10.0.0.2'), oneHop)).toEqual(ip('10.0.0.2'));
  });

  it('skips trusted CIDRs from the right and ignores what the client prepended', () => {
    const h = { 'x-forwarded-for': '6.6.6.6, 8.8.8.8, 10.1.1.1' };
    expect(clientIp(req('10.0.0.2', h), proxies)).toEqual(ip('8.8.8.8'));
    expect(clientIp(req('::ffff:10.0.0.2', h), proxies)).toEqual(ip('8.8.8.8'));
    expect(clientIp(req('2001:db8:ffff::5', { 'x-forwarded-for': '2606:4700::1' }), proxies)).toEqual(ip('2606:4700::1'));
    // Everything trusted: the leftmost entry.
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '10.9.9.9, 10.1.1.1' }), proxies)).toEqual(ip('10.9.9.9'));
  });

  it('stops at a malformed entry instead of believing or skipping it', () => {
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '8.8.8.8, garbage' }), oneHop)).toEqual(ip('10.0.0.2'));
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '8.8.8.8, , 10.1.1.1' }), proxies)).toEqual(ip('10.1.1.1'));
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '' }), oneHop)).toEqual(ip('10.0.0.2'));
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '0x7f000001' }), oneHop)).toEqual(ip('10.0.0.2'));
  });

  it('accepts ports and brackets as proxies write them', () => {
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '203.0.113.9:5678' }), oneHop)).toEqual(ip('203.0.113.9'));
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': '[2001:db8::9]:5678' }), oneHop)).toEqual(ip('2001:db8::9'));
  });

  it('reads RFC 7239 Forwarded, including quoted IPv6 with a port', () => {
    const fwd = 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"';
    expect(clientIp(req('10.0.0.2', { forwarded: fwd }), oneHop)).toEqual(ip('2001:db8:cafe::17'));
    expect(clientIp(req('10.0.0.2', { forwarded: fwd }), { hops: 2, cidrs: [] })).toEqual(ip('192.0.2.60'));
    expect(clientIp(req('10.0.0.2', { forwarded: 'For="8.8.8.8:80"' }), oneHop)).toEqual(ip('8.8.8.8'));
    // Obfuscated and unknown identifiers are not addresses.
    expect(clientIp(req('10.0.0.2', { forwarded: 'for=unknown' }), oneHop)).toEqual(ip('10.0.0.2'));
    expect(clientIp(req('10.0.0.2', { forwarded: 'for=_hidden;proto=https' }), oneHop)).toEqual(ip('10.0.0.2'));
    expect(clientIp(req('10.0.0.2', { forwarded: 'proto=https' }), oneHop)).toEqual(ip('10.0.0.2'));
    // A comma inside quotes does not split elements.
    expect(clientIp(req('10.0.0.2', { forwarded: 'for="8.8.8.8";ext="a,b"' }), oneHop)).toEqual(ip('8.8.8.8'));
  });

  it('prefers X-Forwarded-For over a Forwarded header the proxy did not write', () => {
    const h = { 'x-forwarded-for': '8.8.8.8', forwarded: 'for=1.2.3.4' };
    expect(clientIp(req('10.0.0.2', h), oneHop)).toEqual(ip('8.8.8.8'));
  });

  it('joins repeated headers', () => {
    expect(clientIp(req('10.0.0.2', { 'x-forwarded-for': ['1.1.1.1', '8.8.8.8'] }), oneHop)).toEqual(ip('8.8.8.8'));
  });

  it('returns null only when the socket address itself is unusable', () => {
    expect(clientIp(req('', { 'x-forwarded-for': '8.8.8.8' }), oneHop)).toBeNull();
  });

  it('only ever answers with the peer or an entry of the header, and never throws', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 12 })), { maxLength: 6 }),
        fc.constantFrom(oneHop, threeHops, proxies),
        (entries, trust) => {
          const got = clientIp(req('10.0.0.2', { 'x-forwarded-for': entries.join(',') }), trust);
          const allowed = ['10.0.0.2', ...entries.map((e) => normalizeIp(e)?.address)];
          expect(allowed).toContain(got?.address);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('knows which peers are trusted', () => {
    expect(isTrustedPeer('10.0.0.2', none)).toBe(false);
    expect(isTrustedPeer('203.0.113.7', oneHop)).toBe(true);
    expect(isTrustedPeer('10.200.0.1', proxies)).toBe(true);
    expect(isTrustedPeer('::ffff:10.200.0.1', proxies)).toBe(true);
    expect(isTrustedPeer('11.0.0.1', proxies)).toBe(false);
    expect(isTrustedPeer('garbage', proxies)).toBe(false);
  });
});
