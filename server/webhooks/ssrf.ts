// The SSRF guard of webhook delivery: endpoints may not point at loopback,
// private, link-local, CGNAT or other reserved addresses (cloud metadata at
// 169.254.169.254 included) unless WEBHOOKS_ALLOW_PRIVATE=true. An address
// written in the URL is checked when the endpoint is saved and again before
// each delivery; a host name is checked on every connection, on the address
// it resolved to (so DNS rebinding cannot slip past the check).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPrivateOrReserved, normalizeIp } from '../edge/ip.js';
import { ApiError } from '../errors.js';

export const PRIVATE_TARGET = 'points at a loopback, private or link-local address';

/** True for an address webhooks may not reach (unless allowed). */
export function forbiddenAddress(address: string): boolean {
  const ip = normalizeIp(address);
  return ip === null || isPrivateOrReserved(ip);
}

/** Validates an endpoint URL; 400 `url: …` when it is not acceptable. */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError(400, 'url: must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ApiError(400, 'url: must be an absolute http(s) URL');
  if (url.username || url.password) throw new ApiError(400, 'url: must not contain credentials');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literal = normalizeIp(host) !== null;
    if ((literal && forbiddenAddress(host)) || /^localhost$|\.localhost$/i.test(host)) throw new ApiError(400, `url: ${PRIVATE_TARGET}`);
  }
  return url;
}

/** A `lookup` for http.request that refuses forbidden addresses at connection time. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: false }, (err, address, family) => {
      if (err) return callback(err, '', 0);
      const a = typeof address === 'string' ? address : (address as unknown as LookupAddress).address;
      if (!allowPrivate && forbiddenAddress(a)) {
        const refused = Object.assign(new Error(`${hostname} ${PRIVATE_TARGET}`), { code: 'EPRIVATE' });
        return callback(refused, '', 0);
      }
      callback(null, a, family);
    });
  };
}
