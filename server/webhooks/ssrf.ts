// The SSRF guard of webhook delivery: endpoints may not point at loopback,
// private, link-local, CGNAT or other reserved addresses (cloud metadata at
// 169.254.169.254 included) unless WEBHOOKS_ALLOW_PRIVATE=true. An address
// written in the URL is checked when the endpoint is saved and again before
// each delivery; a host name is checked on every connection, on every address
// it resolves to (so DNS rebinding, or one private address among public ones,
// cannot slip past the check), and the connection only goes to those.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { normalizeIp, type Ip } from '../edge/address.js';
import { isPrivateOrReserved } from '../edge/ip.js';
import { ApiError } from '../errors.js';

export const PRIVATE_TARGET = 'points at a loopback, private or link-local address';

const v4 = (bytes: number[]): Ip => ({ address: bytes.join('.'), version: 4 });

// RFC 6052: where an IPv4 address sits inside a NAT64 address of a given
// prefix length (bits 64–71 are always zero and skipped).
function rfc6052(bytes: number[], prefixLength: 48 | 56 | 64 | 96): Ip {
  if (prefixLength === 96) return v4(bytes.slice(12, 16));
  const withoutU = [...bytes.slice(0, 8), ...bytes.slice(9)];
  return v4(withoutU.slice(prefixLength / 8, prefixLength / 8 + 4));
}

const prefix = (text: string, length: number) => [ipaddr.IPv6.parse(text), length] as const;
const NAT64_WELL_KNOWN = prefix('64:ff9b::', 96);
const NAT64_LOCAL_USE = prefix('64:ff9b:1::', 48);
const SIX_TO_FOUR = prefix('2002::', 16);
const TEREDO = prefix('2001::', 32);

/**
 * The IPv4 addresses an IPv6 address reaches, for the forms that carry one,
 * and whether it is NAT64 (which lands on its IPv4 address alone): NAT64
 * well-known 64:ff9b::/96 and local-use 64:ff9b:1::/48 (at every RFC 6052
 * length, the operator's choice), 6to4 2002::/16, and Teredo 2001::/32 (its
 * server, and its client stored inverted). Classifying visitors treats NAT64
 * as the IPv4 client it carries; an outbound request is judged by where it
 * really lands.
 */
export function embeddedIpv4(ip: Ip): { nat64: boolean; addresses: Ip[] } {
  if (ip.version !== 6) return { nat64: false, addresses: [] };
  const addr = ipaddr.IPv6.parse(ip.address);
  const bytes = addr.toByteArray();
  if (addr.match(...NAT64_WELL_KNOWN)) return { nat64: true, addresses: [rfc6052(bytes, 96)] };
  if (addr.match(...NAT64_LOCAL_USE)) return { nat64: true, addresses: ([48, 56, 64, 96] as const).map((p) => rfc6052(bytes, p)) };
  if (addr.match(...SIX_TO_FOUR)) return { nat64: false, addresses: [v4(bytes.slice(2, 6))] };
  if (addr.match(...TEREDO)) return { nat64: false, addresses: [v4(bytes.slice(4, 8)), v4(bytes.slice(12, 16).map((b) => b ^ 0xff))] };
  return { nat64: false, addresses: [] };
}

/** True for an address webhooks may not reach (unless allowed). */
export function forbiddenAddress(address: string): boolean {
  const ip = normalizeIp(address);
  if (ip === null) return true;
  const embedded = embeddedIpv4(ip);
  if (embedded.addresses.some(isPrivateOrReserved)) return true;
  return !embedded.nat64 && isPrivateOrReserved(ip);
}

/** Validates an endpoint URL; 400 `url: …` when it is not acceptable. */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('validation_failed', 'url: must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ApiError('validation_failed', 'url: must be an absolute http(s) URL');
  if (url.username || url.password) throw new ApiError('validation_failed', 'url: must not contain credentials');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literal = normalizeIp(host) !== null;
    if ((literal && forbiddenAddress(host)) || /^localhost$|\.localhost$/i.test(host)) throw new ApiError('validation_failed', `url: ${PRIVATE_TARGET}`);
  }
  return url;
}

type Resolver = (hostname: string, options: LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` for http.request that resolves every address of a name, refuses
 * the name when any of them is forbidden, and answers in the form the caller
 * asked for: Node 20's connection code (autoSelectFamily) asks for all of
 * them as an array, older callers for one address and its family.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses) => {
      const answer = callback;
      if (err) return answer(err, options.all ? [] : '', 0);
      if (!addresses.length) return answer(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), options.all ? [] : '', 0);
      if (!allowPrivate && addresses.some((a) => forbiddenAddress(a.address))) {
        return answer(Object.assign(new Error(`${hostname} ${PRIVATE_TARGET}`), { code: 'EPRIVATE' }), options.all ? [] : '', 0);
      }
      if (options.all) return answer(null, addresses);
      answer(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
