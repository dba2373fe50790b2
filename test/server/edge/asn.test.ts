import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAsn, type AsnDb } from '../../../server/edge/asn.js';
import { normalizeIp } from '../../../server/edge/address.js';

const lookup = (db: AsnDb, s: string) => db.lookup(normalizeIp(s)!);

describe('ASN table from @ip-location-db/asn', () => {
  let db: AsnDb;
  beforeAll(async () => {
    db = await loadAsn();
  }, 60_000);

  it('loads every range of the package', () => {
    expect(db.stats.v4Ranges).toBeGreaterThan(400_000);
    expect(db.stats.v6Ranges).toBeGreaterThan(100_000);
    expect(db.stats.asns).toBeGreaterThan(90_000);
  });

  it('finds the well-known networks, IPv4 and IPv6', () => {
    expect(lookup(db, '8.8.8.8')).toEqual({ asn: 15169, org: 'Google LLC', prefix: '8.8.8.0/24' });
    expect(lookup(db, '1.1.1.1')).toEqual({ asn: 13335, org: 'Cloudflare, Inc.', prefix: '1.1.1.0/24' });
    expect(lookup(db, '2001:4860:4860::8888')).toMatchObject({ asn: 15169, org: 'Google LLC' });
    expect(lookup(db, '2606:4700:4700::1111')).toMatchObject({ asn: 13335 });
    expect(lookup(db, '2a01:4f8::1')).toMatchObject({ asn: 24940, org: 'Hetzner Online GmbH' });
  });

  it('treats IPv4-mapped IPv6 as IPv4', () => {
    expect(lookup(db, '::ffff:8.8.8.8')).toEqual(lookup(db, '8.8.8.8'));
  });

  it('knows nothing about private space', () => {
    expect(lookup(db, '10.0.0.1')).toBeNull();
    expect(lookup(db, 'fd00::1')).toBeNull();
  });

  it('resolves the one overlap in the data in favour of the more specific range', () => {
    // AS749 (DoD) spans up to 215.0.255.255; AS721 starts at 215.0.0.0 and runs to 215.1.3.255.
    expect(lookup(db, '214.255.255.255')?.asn).toBe(749);
    expect(lookup(db, '215.0.0.1')?.asn).toBe(721);
    expect(lookup(db, '215.1.0.1')?.asn).toBe(721);
  });
});

describe('ASN CSV parsing', () => {
  const fixture = join(import.meta.dirname, '../../fixtures/edge/asn-small');
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-asn-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads quoted names, escaped quotes, UTF-8, CRLF and unsorted rows', async () => {
    const db = await loadAsn(fixture);
    expect(lookup(db, '1.0.0.7')).toEqual({ asn: 13335, org: 'Cloudflare, Inc.', prefix: '1.0.0.0/24' });
    expect(lookup(db, '8.8.9.1')?.org).toBe('LLC "SPUTNIK"');
    expect(lookup(db, '192.0.2.1')?.org).toBe('Réseau Été');
    expect(lookup(db, '2001:db8::1')).toEqual({ asn: 64502, org: 'Documentation, Example', prefix: '2001:db8::/32' });
    expect(lookup(db, '2001:4860::1')?.asn).toBe(15169);
    expect(lookup(db, '1.0.1.0')).toBeNull();
    expect(db.stats).toMatchObject({ v4Ranges: 4, v6Ranges: 2, asns: 5 });
  });

  it('refuses a file with malformed rows rather than serving half a table', async () => {
    writeFileSync(join(dir, 'asn-ipv4-num.csv'), '16777216,16777471,13335,Cloudflare\nthis is not a row\n1,x,5,Bad number\n9,8,5,Backwards\n');
    writeFileSync(join(dir, 'asn-ipv6-num.csv'), '1,2,3,Fine\n-1,2,3,Negative\n');
    await expect(loadAsn(dir)).rejects.toThrow(/4 malformed rows/);
  });
});
