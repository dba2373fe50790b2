// The canonical form of list values, by kind, and the errors that name what
// is wrong with a value (they reach 400 bodies).
import { describe, expect, it } from 'vitest';
import { normalizeListValue } from '../../../server/decisions/listValues.js';

const ok = (kind: Parameters<typeof normalizeListValue>[0], raw: string) => normalizeListValue(kind, raw);

describe('normalizeListValue', () => {
  it('ip: single addresses bare, ranges as their network, IPv4-mapped IPv6 as IPv4', () => {
    const cases: [string, string][] = [
      ['10.1.2.3', '10.1.2.3'],
      [' 10.1.2.3 ', '10.1.2.3'],
      ['10.1.2.3/8', '10.0.0.0/8'],
      ['10.1.2.3/32', '10.1.2.3'],
      ['10.1.2.3/31', '10.1.2.2/31'],
      ['0.0.0.0/0', '0.0.0.0/0'],
      ['255.255.255.255/1', '128.0.0.0/1'],
      ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
      ['2001:db8::1/128', '2001:db8::1'],
      ['2001:db8:1:2:3:4:5:6/33', '2001:db8::/33'],
      ['::/0', '::/0'],
      ['::ffff:192.0.2.1', '192.0.2.1'],
      ['::ffff:c000:201', '192.0.2.1'],
      ['::ffff:192.0.2.1/120', '192.0.2.0/24'],
      ['::ffff:192.0.2.1/96', '0.0.0.0/0'],
      // Shorter than the mapped block: it reaches beyond IPv4, so it stays IPv6.
      ['::ffff:192.0.2.1/95', '::fffe:0:0/95'],
      ['64:ff9b::192.0.2.1', '64:ff9b::c000:201'],
    ];
    for (const [raw, value] of cases) expect(ok('ip', raw), raw).toEqual({ value });
  });

  it('ip: refuses what is not one address or range', () => {
    for (const raw of [
      '',
      'abc',
      '10.1.2',
      '10.1.2.3.4',
      '010.1.2.3',
      '10.1.2.256',
      '0x7f.0.0.1',
      '2130706433',
      '2001:db8::1%eth0',
      '2001:db8::g',
      '1::2::3',
      '::ffff:0x7f.0.0.1',
      '10.0.0.0 /8',
    ]) {
      expect(ok('ip', raw), raw).toEqual({ error: 'not an IP address or CIDR range' });
    }
    for (const raw of ['10.1.2.3/', '10.0.0.0/8/8', '10.0.0.0/33', '10.0.0.0/08', '10.0.0.0/-1', '10.0.0.0/x', '10.0.0.0/1000'])
      expect(ok('ip', raw), raw).toEqual({ error: 'prefix length must be 0 to 32' });
    for (const raw of ['2001:db8::/129', '2001:db8::/0128']) expect(ok('ip', raw), raw).toEqual({ error: 'prefix length must be 0 to 128' });
  });

  it('asn: digits, with or without AS in any case', () => {
    for (const raw of ['13335', 'AS13335', 'as13335', 'As13335', ' AS13335 ', '013335']) expect(ok('asn', raw), raw).toEqual({ value: '13335' });
    expect(ok('asn', '1')).toEqual({ value: '1' });
    expect(ok('asn', '4294967295')).toEqual({ value: '4294967295' });
    for (const raw of ['0', 'AS0', '4294967296', 'AS', 'AS 13335', '13335a', 'ASN13335', '-5', '1.5', '', '12345678901']) {
      expect(ok('asn', raw), raw).toEqual({ error: 'not an AS number (13335 or AS13335, 1 to 4294967295)' });
    }
  });

  it('country: two letters, upper case', () => {
    expect(ok('country', 'us')).toEqual({ value: 'US' });
    expect(ok('country', ' De ')).toEqual({ value: 'DE' });
    for (const raw of ['USA', 'U', '', 'U1', 'ü1', '12'])
      expect(ok('country', raw), raw).toEqual({ error: 'not a country code (two letters, ISO 3166-1 alpha-2)' });
  });

  it('visitorId: iq_ and a ULID, as the service writes them', () => {
    expect(ok('visitorId', 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).toEqual({ value: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' });
    expect(ok('visitorId', ' iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z\n')).toEqual({ value: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' });
    for (const raw of [
      'iq_01jd0s3v6zq8y0k2w3zp4x5y6z',
      'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6',
      'IQ_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      '',
    ]) {
      expect(ok('visitorId', raw), raw).toEqual({ error: 'not a visitor id (iq_ followed by a ULID)' });
    }
  });

  it('linkedId: as identify takes it, up to 256 characters', () => {
    expect(ok('linkedId', ' user 42 ')).toEqual({ value: ' user 42 ' });
    expect(ok('linkedId', 'x'.repeat(256))).toEqual({ value: 'x'.repeat(256) });
    expect(ok('linkedId', 'x'.repeat(257))).toEqual({ error: 'longer than 256 characters' });
    expect(ok('linkedId', '')).toEqual({ error: 'empty' });
  });
});
