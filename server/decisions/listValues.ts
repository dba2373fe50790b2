// The canonical form of a list entry's value, by the list's kind, so that
// one thing has one spelling (lookups are exact): CIDR ranges as their
// network with single addresses bare, ASNs as digits, countries upper case.
// Error texts go into 400 bodies, one per bad value.
import ipaddr from 'ipaddr.js';
import { VisitorIdSchema } from '../../contract/common.js';
import { LIMITS } from '../../contract/identify.js';
import type { ListKind } from '../store/lists.js';

export type Normalized = { value: string } | { error: string };

const ASN_MAX = 2 ** 32 - 1;
const PREFIX_LENGTH = /^(0|[1-9]\d?\d?)$/;

/** `value`'s canonical form in a list of `kind`, or why it cannot be one. */
export function normalizeListValue(kind: ListKind, raw: string): Normalized {
  switch (kind) {
    case 'ip':
      return normalizeIpEntry(raw.trim());
    case 'asn': {
      const m = /^(?:as)?(\d{1,10})$/i.exec(raw.trim());
      const n = m ? Number(m[1]) : 0;
      return n >= 1 && n <= ASN_MAX ? { value: String(n) } : { error: 'not an AS number (13335 or AS13335, 1 to 4294967295)' };
    }
    case 'country': {
      const s = raw.trim();
      return /^[A-Za-z]{2}$/.test(s) ? { value: s.toUpperCase() } : { error: 'not a country code (two letters, ISO 3166-1 alpha-2)' };
    }
    case 'visitorId': {
      const s = raw.trim();
      return VisitorIdSchema.safeParse(s).success ? { value: s } : { error: 'not a visitor id (iq_ followed by a ULID)' };
    }
    case 'linkedId':
      // As identify takes it: exactly as sent, spaces included.
      if (raw === '') return { error: 'empty' };
      return raw.length <= LIMITS.linkedIdChars ? { value: raw } : { error: `longer than ${LIMITS.linkedIdChars} characters` };
  }
}

const NOT_IP = 'not an IP address or CIDR range';

/** A single address (IPv4 or IPv6) or a CIDR range; IPv4-mapped IPv6 becomes IPv4. */
function normalizeIpEntry(s: string): Normalized {
  const slash = s.indexOf('/');
  const text = slash === -1 ? s : s.slice(0, slash);
  const address = parseAddress(text);
  if (!address) return { error: NOT_IP };
  const max = address.kind() === 'ipv4' ? 32 : 128;
  let length = max;
  if (slash !== -1) {
    const lengthText = s.slice(slash + 1);
    if (!PREFIX_LENGTH.test(lengthText) || Number(lengthText) > max) return { error: `prefix length must be 0 to ${max}` };
    length = Number(lengthText);
  }
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    // ::ffff:a.b.c.d/n with n ≥ 96 is the IPv4 range a.b.c.d/(n − 96); a shorter prefix reaches beyond the mapped block and stays IPv6.
    if (length >= 96) return canonical((address as ipaddr.IPv6).toIPv4Address(), length - 96, 32);
  }
  return canonical(address, length, max);
}

function canonical(address: ipaddr.IPv4 | ipaddr.IPv6, length: number, max: number): Normalized {
  if (length === max) return { value: address.toString() };
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${length}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${length}`);
  return { value: `${network.toString()}/${length}` };
}

/**
 * Four decimal octets, or IPv6 (without a zone). ipaddr.js alone would also
 * take "0x7f.1", "2130706433" or octal octets, which nobody means in a list.
 */
function parseAddress(s: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(s)) return ipaddr.IPv4.parse(s);
  if (s.includes('%')) return null;
  const tail = s.slice(s.lastIndexOf(':') + 1);
  if (tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  return ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s) : null;
}
