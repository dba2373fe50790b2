// Address text (server/edge/address.ts): what a client address, a CIDR and a prefix are.
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { normalizeIp, parseCidr, prefixOf, v4Key, v6Key, v6ToString } from '../../../server/edge/address.js';

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

describe('address keys', () => {
  it('parses dotted quads strictly', () => {
    expect(v4Key('0.0.0.0')).toBe(0);
    expect(v4Key('255.255.255.255')).toBe(0xffffffff);
    expect(v4Key('8.8.8.8')).toBe(0x08080808);
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '010.0.0.1', '1.02.3.4', '1.2.3.00', '1..2.3', '1.2.3.', 'a.b.c.d', '1.2.3.4/8', '1234.1.1.1']) {
      expect(v4Key(bad), bad).toBe(-1);
    }
  });

  it('parses IPv6 text exactly as ipaddr.js does', () => {
    fc.assert(
      fc.property(fc.ipV6(), (s) => {
        // ipaddr.js reads the deprecated "::a.b.c.d" as IPv4-mapped; RFC 4291 and we read it as written.
        fc.pre(!/^::[\d.]+$/.test(s));
        const bytes = ipaddr.IPv6.parse(s).toByteArray();
        const expected = bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
        expect(v6Key(s)).toBe(expected);
        expect(v6Key(v6ToString(expected))).toBe(expected);
      }),
      { numRuns: 2000 },
    );
    for (const bad of ['', ':', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1::2::3', 'g::1', '12345::', '::1.2.3', '1:2:3:4:5:6:7:1.2.3.4']) {
      expect(v6Key(bad), bad).toBeNull();
    }
  });

  it('parses CIDRs, masks host bits and maps IPv4-mapped IPv6 to IPv4', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ version: 4, first: 0x0a000000, last: 0x0affffff });
    expect(parseCidr('1.2.3.4/24')).toEqual({ version: 4, first: 0x01020300, last: 0x010203ff });
    expect(parseCidr('0.0.0.0/0')).toEqual({ version: 4, first: 0, last: 0xffffffff });
    expect(parseCidr('::ffff:1.2.3.0/120')).toEqual({ version: 4, first: 0x01020300, last: 0x010203ff });
    expect(parseCidr('2001:db8::/32')).toEqual({ version: 6, first: 0x20010db8n << 96n, last: (0x20010db8n << 96n) | ((1n << 96n) - 1n) });
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/a', 'example.com', '1.2.3.4/-1']) expect(parseCidr(bad), bad).toBeNull();
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
