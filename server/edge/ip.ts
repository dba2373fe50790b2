// Client address: which proxy headers to believe, and reserved space.
import type { TrustProxy } from '../config.js';
import { normalizeIp, type Ip } from './address.js';
import { RESERVED_SPACE } from './curated.js';
import { RangeSet } from './ranges.js';

// IANA special-purpose space (data/reserved.json), less its exceptions.
const RESERVED = RangeSet.fromCidrs(RESERVED_SPACE.reserved.map((b) => b.cidr)).set;
const NOT_RESERVED = RangeSet.fromCidrs(RESERVED_SPACE.exceptions.map((b) => b.cidr)).set;

export function isPrivateOrReserved(ip: Ip): boolean {
  return RESERVED.has(ip) && !NOT_RESERVED.has(ip);
}

export interface RequestLike {
  socketAddress: string;
  headers: Record<string, string | string[] | undefined>;
}

// A TrustProxy object comes from the config once; compile its CIDRs once.
const compiledTrust = new WeakMap<TrustProxy, RangeSet>();
function trustedSet(trust: TrustProxy): RangeSet {
  let set = compiledTrust.get(trust);
  if (!set) {
    set = RangeSet.fromCidrs(trust.cidrs).set;
    compiledTrust.set(trust, set);
  }
  return set;
}

/** Whether the direct peer is a proxy whose forwarding headers we believe. */
export function isTrustedPeer(socketAddress: string, trust: TrustProxy): boolean {
  if (trust.hops > 0) return true;
  if (trust.cidrs.length === 0) return false;
  const peer = normalizeIp(socketAddress);
  return peer !== null && trustedSet(trust).has(peer);
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(',') : v;
}

/** Splits on commas outside double quotes (Forwarded allows quoted strings). */
function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && quoted) i++;
    else if (c === sep && !quoted) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** RFC 7239 for= values, left to right; an element without for= yields '' (unbelievable). */
function forwardedFor(header: string): string[] {
  return splitOutsideQuotes(header, ',').map((element) => {
    for (const pair of splitOutsideQuotes(element, ';')) {
      const eq = pair.indexOf('=');
      if (eq === -1 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let v = pair.slice(eq + 1).trim();
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
      return v;
    }
    return '';
  });
}

/**
 * The client address. The socket peer is the answer unless it is a trusted
 * proxy; then the forwarding chain is walked from the right (the entry
 * nearest to us, the only one a proxy of ours wrote): with `hops`, exactly
 * that many proxies are stepped over; with `cidrs`, entries are skipped while
 * they are trusted. A malformed entry ends the walk at the last address we
 * could vouch for, so garbage is never returned and never believed.
 *
 * X-Forwarded-For wins over Forwarded when both are present: it is what
 * nginx, HAProxy, the cloud load balancers and CDNs write, and a header our
 * proxy does not write is client-controlled.
 */
export function clientIp(req: RequestLike, trust: TrustProxy): Ip | null {
  const peer = normalizeIp(req.socketAddress);
  if (!peer || !isTrustedPeer(req.socketAddress, trust)) return peer;
  const xff = headerValue(req.headers['x-forwarded-for']);
  const fwd = xff === undefined ? headerValue(req.headers['forwarded']) : undefined;
  const chain = xff !== undefined ? xff.split(',') : fwd !== undefined ? forwardedFor(fwd) : [];
  let current = peer;
  let steps = 0;
  for (let i = chain.length - 1; i >= 0; i--) {
    if (trust.hops > 0 ? steps >= trust.hops : !trustedSet(trust).has(current)) break;
    const next = normalizeIp(chain[i]!);
    if (!next) break;
    current = next;
    steps++;
  }
  return current;
}
