// Address text: parsing client addresses and CIDRs, the integer keys range
// tables search, and the prefixes a client is compared and limited by.
import ipaddr from 'ipaddr.js';

export interface Ip {
  /** Canonical text: dotted quad, or RFC 5952 compressed lowercase IPv6. */
  readonly address: string;
  readonly version: 4 | 6;
}

/**
 * Parses an address as it appears in sockets and proxy headers. Accepts
 * brackets ("[2001:db8::1]", "[2001:db8::1]:443"), an IPv4 port
 * ("203.0.113.9:5678", as Azure writes X-Forwarded-For) and zone ids
 * ("fe80::1%eth0"). IPv4-mapped IPv6 becomes IPv4 so one client has one
 * address. IPv4 must be four decimal octets: ipaddr.js alone would also take
 * "0x7f.1" or "2130706433", which no proxy writes and an attacker might.
 */
export function normalizeIp(raw: string): Ip | null {
  let s = raw.trim();
  if (s.length === 0 || s.length > 100) return null;
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close === -1) return null;
    const rest = s.slice(close + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    s = s.slice(1, close);
  } else if (/^[\d.]+:\d{1,5}$/.test(s)) {
    s = s.slice(0, s.indexOf(':'));
  }
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  if (s.includes(':')) {
    // ipaddr.js would accept a hex or octal IPv4 tail here too.
    const tail = s.slice(s.lastIndexOf(':') + 1);
    if (tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
    if (!ipaddr.IPv6.isValid(s)) return null;
    addr = ipaddr.process(s);
  } else {
    if (!ipaddr.IPv4.isValidFourPartDecimal(s)) return null;
    addr = ipaddr.IPv4.parse(s);
  }
  return addr.kind() === 'ipv4' ? { address: addr.toString(), version: 4 } : { address: addr.toString(), version: 6 };
}

/**
 * The prefix identification compares a client address by: the /24 of an
 * IPv4 address (a household or office behind one router) and the /56 of an
 * IPv6 one (what ISPs delegate to a home; a /48 holds 256 of them). Which AS
 * and what kind of network it is are judged separately (server/edge/network.ts).
 */
export function prefixOf(ip: Ip): string {
  if (ip.version === 4) return `${ip.address.slice(0, ip.address.lastIndexOf('.'))}.0/24`;
  const parts = ipaddr.IPv6.parse(ip.address).parts.slice(0, 4);
  parts[3] = parts[3]! & 0xff00;
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/56`;
}

/** Dotted-quad IPv4 → uint32, or -1 unless the text is exactly four decimal octets (no leading zeros). */
export function v4Key(s: string): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      // A leading zero reads as octal to some parsers: refuse rather than pick a meaning.
      if (digits === 1 && octet === 0) return -1;
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return -1;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + octet;
}

export function v4ToString(k: number): string {
  return `${k >>> 24}.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`;
}

function hexGroup(g: string): number {
  if (g.length === 0 || g.length > 4) return -1;
  let v = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** Parses 16-bit groups (a trailing dotted quad counts as two) into out; false if malformed. */
function groupsInto(parts: string[], out: number[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (i === parts.length - 1 && p.includes('.')) {
      const v4 = v4Key(p);
      if (v4 < 0) return false;
      out.push(v4 >>> 16, v4 & 0xffff);
    } else {
      const g = hexGroup(p);
      if (g < 0) return false;
      out.push(g);
    }
  }
  return true;
}

/**
 * Textual IPv6 (no zone id, no brackets) → four uint32 words written at
 * out[at..at+3]. Returns false when the text is not an IPv6 address.
 */
export function v6Words(s: string, out: Uint32Array, at = 0): boolean {
  const dbl = s.indexOf('::');
  const head: number[] = [];
  const tail: number[] = [];
  if (dbl === -1) {
    if (!groupsInto(s.split(':'), head) || head.length !== 8) return false;
  } else {
    if (s.indexOf('::', dbl + 1) !== -1) return false;
    const h = s.slice(0, dbl);
    const t = s.slice(dbl + 2);
    if (h !== '' && !groupsInto(h.split(':'), head)) return false;
    if (t !== '' && !groupsInto(t.split(':'), tail)) return false;
    if (head.length + tail.length > 7) return false;
  }
  const g = new Array<number>(8).fill(0);
  for (let i = 0; i < head.length; i++) g[i] = head[i]!;
  for (let i = 0; i < tail.length; i++) g[8 - tail.length + i] = tail[i]!;
  for (let w = 0; w < 4; w++) out[at + w] = ((g[2 * w]! << 16) | g[2 * w + 1]!) >>> 0;
  return true;
}

const scratch = new Uint32Array(4);

/** Textual IPv6 → 128-bit BigInt, or null. */
export function v6Key(s: string): bigint | null {
  if (!v6Words(s, scratch)) return null;
  return wordsToBig(scratch, 0);
}

export function wordsToBig(w: Uint32Array, at: number): bigint {
  return (BigInt(w[at]!) << 96n) | (BigInt(w[at + 1]!) << 64n) | (BigInt(w[at + 2]!) << 32n) | BigInt(w[at + 3]!);
}

export function bigToWords(k: bigint, out: Uint32Array, at: number): void {
  out[at] = Number((k >> 96n) & 0xffffffffn);
  out[at + 1] = Number((k >> 64n) & 0xffffffffn);
  out[at + 2] = Number((k >> 32n) & 0xffffffffn);
  out[at + 3] = Number(k & 0xffffffffn);
}

export function v6ToString(k: bigint): string {
  const bytes: number[] = [];
  for (let shift = 120n; shift >= 0n; shift -= 8n) bytes.push(Number((k >> shift) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

/**
 * Parses "address" or "address/prefix" (IPv4 or IPv6) into an inclusive range.
 * Host bits below the prefix are ignored (lists often write 1.2.3.4/24).
 * IPv4-mapped IPv6 (::ffff:a.b.c.d/120) becomes IPv4, as addresses do.
 */
export function parseCidr(text: string): { version: 4; first: number; last: number } | { version: 6; first: bigint; last: bigint } | null {
  const slash = text.indexOf('/');
  const addr = slash === -1 ? text : text.slice(0, slash);
  const lenText = slash === -1 ? '' : text.slice(slash + 1);
  if (slash !== -1 && !/^\d{1,3}$/.test(lenText)) return null;
  const v4 = v4Key(addr);
  if (v4 >= 0) {
    const len = slash === -1 ? 32 : Number(lenText);
    if (len > 32) return null;
    const size = 2 ** (32 - len);
    const first = Math.floor(v4 / size) * size;
    return { version: 4, first, last: first + size - 1 };
  }
  const v6 = addr.includes(':') ? v6Key(addr) : null;
  if (v6 === null) return null;
  const len = slash === -1 ? 128 : Number(lenText);
  if (len > 128) return null;
  const hostBits = BigInt(128 - len);
  const first = (v6 >> hostBits) << hostBits;
  const last = first | ((1n << hostBits) - 1n);
  if (len >= 96 && first >> 32n === 0xffffn) {
    return { version: 4, first: Number(first & 0xffffffffn), last: Number(last & 0xffffffffn) };
  }
  return { version: 6, first, last };
}

/** Per-IP limits count an IPv6 client by its /64 (one host usually has a whole /64). */
export function ipLimitKey(ip: string): string {
  try {
    const addr = ipaddr.process(ip);
    if (addr.kind() === 'ipv4') return addr.toString();
    return `${(addr as ipaddr.IPv6).parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return ip;
  }
}
