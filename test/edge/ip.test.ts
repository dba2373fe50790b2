import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TrustProxy } from '../../server/config.js';
import { clientIp, isPrivateOrReserved, isTrustedPeer, normalizeIp, prefixOf, type Ip } from '../../server/edge/ip.js';

const ip = (s: string): Ip => {
  const n = normalizeIp(s);
  if (!n) throw new Error(`test address ${s} does not parse`);
  return n;
};

describe('normalizeIp', () => {
  it.each([
    ['8.8.8.8', '8.8.8.8', 4],
    [' 8.8.8.8 ', '8.8.8.8', 4],
    ['::ffff:8.8.8.8', '8.8.8.8', 4],
    ['::ffff:808:808', '8.8.8.8', 4],
    ['203.0.113.9:5678', '203.0.113.9', 4],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1', 6],
    ['[2001:db8::1]', '2001:db8::1', 6],
    ['[2001:db8::1]:443', '2001:db8::1', 6],
    ['fe80::1%eth0', 'fe80::1', 6],
    ['[::ffff:10.0.0.1]:80', '10.0.0.1', 4],
  ] as const)('%s → %s', (raw, address, version) => {
    expect(normalizeIp(raw)).toEqual({ address, version });
  });

  it.each([
    '',
    'unknown',
    '_hidden',
    '1.2.3',
    '256.1.1.1',
    '0x7f.0.0.1',
    '2130706433',
    '010.0.0.1',
    '::ffff:0x7f.0.0.1',
    '[2001:db8::1',
    '[2001:db8::1]x',
    '2001:db8::1:443:1:1:1:1:1',
    'example.com',
    '1.2.3.4/24',
    'a'.repeat(200),
  ])('rejects %j', (raw) => {
    expect(normalizeIp(raw)).toBeNull();
  });

  it('never throws and always returns a canonical form', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), (s) => {
        const n = normalizeIp(s);
        if (n) expect(normalizeIp(n.address)).toEqual(n);
      }),
      { numRuns: 3000 },
    );
  });
});

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

describe('prefixOf', () => {
  const net = (s: string) => prefixOf(normalizeIp(s)!);
  it('is the /24 of IPv4 and the /56 of IPv6, whatever the notation', () => {
    expect(net('81.2.69.160')).toBe('81.2.69.0/24');
    expect(net('::ffff:81.2.69.1')).toBe('81.2.69.0/24');
    expect(net('2a02:c7f:1234:5678::1')).toBe('2a02:c7f:1234:5600::/56');
    expect(net('2A02:0C7F:1234:56FF:0:0:0:9')).toBe('2a02:c7f:1234:5600::/56');
    expect(net('2001:db8::1')).toBe('2001:db8::/56');
  });
  it('keeps homes of one /48 apart', () => {
    expect(net('2a02:c7f:1234:5678::1')).not.toBe(net('2a02:c7f:1234:9abc::1'));
  });
});
