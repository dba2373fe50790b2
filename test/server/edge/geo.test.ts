import { beforeAll, describe, expect, it } from 'vitest';
import { loadGeo, UNKNOWN_LOCATION, type Geo } from '../../../server/edge/geo.js';
import { normalizeIp } from '../../../server/edge/address.js';

describe('geolocation (DB-IP Lite city)', () => {
  let geo: Geo;
  const at = (s: string) => geo.lookup(normalizeIp(s)!);
  beforeAll(() => {
    geo = loadGeo();
  });

  it('locates public IPv4 addresses and derives the time zone from the coordinates', () => {
    const g = at('8.8.8.8');
    expect(g).toMatchObject({ country: 'US', region: 'California', timezone: 'America/Los_Angeles' });
    expect(g.latitude).toBeCloseTo(37.42, 1);
    expect(g.longitude).toBeCloseTo(-122.08, 1);
    expect(at('81.2.69.160')).toMatchObject({ country: 'GB', city: 'London', timezone: 'Europe/London' });
    expect(at('1.1.1.1')).toMatchObject({ country: 'AU', timezone: 'Australia/Sydney' });
  });

  it('reads IPv6 addresses from the IPv6 file', () => {
    // The IPv4 file answers IPv6 questions with a wrong record (CN, Asia/Shanghai for this one).
    expect(at('2a01:4f8::1')).toMatchObject({ country: 'DE', timezone: 'Europe/Berlin' });
    const google = at('2001:4860:4860::8888');
    expect(google.country).toMatch(/^[A-Z]{2}$/);
    expect(google.timezone).toMatch(/^America\//);
  });

  it('treats IPv4-mapped IPv6 as the IPv4 address', () => {
    expect(at('::ffff:8.8.8.8')).toEqual(at('8.8.8.8'));
  });

  it.each(['10.0.0.1', '192.168.1.1', '127.0.0.1', '100.64.0.1', '169.254.1.1', '::1', 'fe80::1', 'fd00::1', '2001:db8::1'])(
    'answers %s with an honest empty location',
    (s) => {
      expect(at(s)).toEqual(UNKNOWN_LOCATION);
      expect(at(s)).toEqual({ country: '', city: '', region: '', latitude: null, longitude: null, timezone: null });
    },
  );

  it('returns a fresh object each time, so callers may change it', () => {
    const a = at('10.0.0.1');
    a.country = 'XX';
    expect(at('10.0.0.1').country).toBe('');
  });

  it('knows when the data was built', () => {
    expect(geo.builtAt.toISOString()).toBe('2026-06-05T13:42:02.000Z');
  });
});
