// One list in memory: exact values with expiry, and in ip lists the CIDR
// ranges an address falls in (nested ranges with different expiries, IPv4
// and IPv6, the ends of the address space), against a naive model.
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { ListIndex } from '../../../server/decisions/listIndex.js';
import { normalizeListValue } from '../../../server/decisions/listValues.js';
import type { ListEntryState } from '../../../server/store/lists.js';

const NOW = Date.UTC(2026, 0, 15);

function index(kind: ConstructorParameters<typeof ListIndex>[0], entries: [string, number | null][]): ListIndex {
  const ix = new ListIndex(kind);
  ix.apply(entries.map(([value, expiresAt]) => ({ value, expiresAt })));
  return ix;
}

describe('ListIndex: exact values', () => {
  it('holds values until they expire, and forgets removed ones', () => {
    const ix = index('visitorId', [
      ['iq_A', null],
      ['iq_B', NOW + 1000],
    ]);
    expect(ix.size).toBe(2);
    expect(ix.has('iq_A', NOW + 10 ** 12)).toBe(true);
    expect(ix.has('iq_B', NOW + 999)).toBe(true);
    // expiresAt is the first millisecond it no longer matches.
    expect(ix.has('iq_B', NOW + 1000)).toBe(false);
    expect(ix.has('iq_C', NOW)).toBe(false);
    ix.apply([{ value: 'iq_A', expiresAt: null, removed: true }]);
    expect(ix.has('iq_A', NOW)).toBe(false);
    expect(ix.size).toBe(1);
  });

  it('takes numbers as their digits (ASNs)', () => {
    const ix = index('asn', [['13335', null]]);
    expect(ix.has(13335, NOW)).toBe(true);
    expect(ix.has('13335', NOW)).toBe(true);
    expect(ix.has(133350, NOW)).toBe(false);
  });

  it('is idempotent: the same state applied again, or an expiry changed back and forth', () => {
    const ix = new ListIndex('ip');
    const state: ListEntryState[] = [
      { value: '10.0.0.0/8', expiresAt: NOW + 10 },
      { value: '2001:db8::/32', expiresAt: null },
      { value: '192.0.2.1', expiresAt: null },
    ];
    ix.apply(state);
    ix.apply(state);
    expect(ix.size).toBe(3);
    expect(ix.has('10.9.9.9', NOW)).toBe(true);
    ix.apply([{ value: '10.0.0.0/8', expiresAt: NOW - 1 }]);
    expect(ix.has('10.9.9.9', NOW)).toBe(false);
    ix.apply([{ value: '10.0.0.0/8', expiresAt: null }]);
    expect(ix.has('10.9.9.9', NOW + 10 ** 9)).toBe(true);
    ix.apply([{ value: '2001:db8::/32', expiresAt: null, removed: true }]);
    expect(ix.has('2001:db8::1', NOW)).toBe(false);
    // Removing what is not held changes nothing.
    ix.apply([{ value: '2001:db8::/32', expiresAt: null, removed: true }]);
    expect(ix.size).toBe(2);
  });

  it('matches ranges only in ip lists, and only strings', () => {
    expect(index('linkedId', [['10.0.0.0/8', null]]).has('10.1.1.1', NOW)).toBe(false);
    expect(index('ip', [['0.0.0.0/0', null]]).has(167837953, NOW)).toBe(false);
  });
});

describe('ListIndex: ip lists', () => {
  // Made again for each test: the segments are built by a test's first lookup.
  const ipList = () =>
    index('ip', [
      ['10.0.0.0/16', NOW + 1000],
      ['10.0.1.0/24', null],
      ['10.0.2.0/24', NOW + 500],
      ['10.0.2.128/25', NOW + 2000],
      ['192.0.2.7', null],
      ['198.51.100.9', NOW + 100],
      ['2001:db8::/32', NOW + 5000],
      ['2001:db8:1::/48', NOW + 500],
      ['2001:db8:1:2::/64', null],
      ['2001:db8:ffff::1', null],
      ['255.255.255.0/24', null],
      ['ffff:ffff:ffff:ffff::/64', null],
    ]);

  it('matches an address inside a live range, however the ranges nest', () => {
    const ix = ipList();
    expect(ix.has('10.0.0.1', NOW)).toBe(true);
    // Inside an expired /16 and a live /24.
    expect(ix.has('10.0.1.200', NOW + 5000)).toBe(true);
    expect(ix.has('10.0.0.1', NOW + 1000)).toBe(false);
    // A /25 outliving its /24 and /16; the rest of the /24 expires with them.
    expect(ix.has('10.0.2.200', NOW + 1500)).toBe(true);
    expect(ix.has('10.0.2.100', NOW + 1500)).toBe(false);
    expect(ix.has('10.0.2.100', NOW + 700)).toBe(true);
    // Right after the /24 ends the /16 goes on.
    expect(ix.has('10.0.3.0', NOW + 999)).toBe(true);
    expect(ix.has('10.1.0.0', NOW)).toBe(false);
    expect(ix.has('9.255.255.255', NOW)).toBe(false);
  });

  it('matches single addresses, IPv4-mapped IPv6 as IPv4, and IPv6 in any spelling', () => {
    const ix = ipList();
    expect(ix.has('192.0.2.7', NOW)).toBe(true);
    expect(ix.has('192.0.2.8', NOW)).toBe(false);
    expect(ix.has('198.51.100.9', NOW + 99)).toBe(true);
    expect(ix.has('198.51.100.9', NOW + 100)).toBe(false);
    expect(ix.has('::ffff:192.0.2.7', NOW)).toBe(true);
    expect(ix.has('::ffff:198.51.100.9', NOW + 100)).toBe(false);
    expect(ix.has('::ffff:10.0.1.5', NOW + 5000)).toBe(true);
    expect(ix.has('2001:DB8:FFFF:0:0:0:0:1', NOW)).toBe(true);
    expect(ix.has('2001:db8:ffff::2', NOW + 6000)).toBe(false);
    expect(ix.has('2001:DB8:FFFF::1', NOW + 6000)).toBe(true);
    // Mapped addresses held by no entry, or by one expiring now.
    expect(ix.has('::ffff:203.0.113.1', NOW)).toBe(false);
    expect(ix.has('::ffff:10.0.0.1', NOW + 1000)).toBe(false);
    expect(ix.has('::ffff:10.0.0.1', NOW + 999)).toBe(true);
    // IPv6 addresses that only look mapped in part are IPv6.
    for (const v of ['::1:0:ffff:a00:1', '1::ffff:a00:1', '::ffff:0:a00:1', '0:0:0:0:1:ffff:a00:1']) expect(ix.has(v, NOW), v).toBe(false);
  });

  it('matches IPv6 ranges nested with other expiries', () => {
    const ix = ipList();
    expect(ix.has('2001:db8:5::1', NOW + 4999)).toBe(true);
    expect(ix.has('2001:db8:5::1', NOW + 5000)).toBe(false);
    expect(ix.has('2001:db8:1::1', NOW + 1000)).toBe(true);
    expect(ix.has('2001:db8:1:2::1', NOW + 10 ** 9)).toBe(true);
    expect(ix.has('2001:db8:1:3::1', NOW + 6000)).toBe(false);
    expect(ix.has('2001:db9::', NOW)).toBe(false);
  });

  it('reaches the ends of the address space', () => {
    const ix = ipList();
    expect(ix.has('255.255.255.255', NOW)).toBe(true);
    expect(ix.has('255.255.254.255', NOW)).toBe(false);
    expect(ix.has('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', NOW)).toBe(true);
    expect(ix.has('ffff:ffff:ffff:fffe:ffff:ffff:ffff:ffff', NOW)).toBe(false);
    const all = index('ip', [
      ['0.0.0.0/0', NOW + 1],
      ['::/0', NOW + 1],
    ]);
    expect(all.has('0.0.0.0', NOW)).toBe(true);
    expect(all.has('255.255.255.255', NOW)).toBe(true);
    expect(all.has('::', NOW)).toBe(true);
    expect(all.has('2001:db8::1', NOW + 1)).toBe(false);
  });

  it('does not take what is not an address', () => {
    const ix = ipList();
    for (const v of ['', '10.0.1', '10.0.1.0/24x', 'abc', '10.0.1.256', '2001:db8::g', '2001:db8:1::/48/1', 'fe80::1%eth0']) expect(ix.has(v, NOW)).toBe(false);
    // A range entry is also found by its own text.
    expect(ix.has('10.0.1.0/24', NOW)).toBe(true);
  });

  it('keeps the expiry of an outer range where an inner one ends at, or starts at, its edge', () => {
    const edges = index('ip', [
      ['10.0.0.0/31', NOW + 100],
      ['10.0.0.0', NOW + 10],
      ['10.0.1.0/24', NOW + 100],
      ['10.0.1.255/32', NOW + 10],
      ['10.0.1.254/31', NOW + 5],
      ['2001:db8::/127', NOW + 100],
      ['2001:db8::1', NOW + 10],
      ['2001:db8::2/127', NOW + 100],
      ['2001:db8::2', NOW + 10],
    ]);
    for (const [address, live] of [
      ['10.0.0.0', true],
      ['10.0.0.1', true],
      ['10.0.1.255', true],
      ['10.0.1.254', true],
      ['10.0.1.253', true],
      ['2001:db8::', true],
      ['2001:db8::1', true],
      ['2001:db8::2', true],
      ['2001:db8::3', true],
      ['2001:db8::4', false],
    ] as const) {
      expect(edges.has(address, NOW + 50), address).toBe(live);
      expect(edges.has(address, NOW + 100), address).toBe(false);
    }
    expect(edges.has('10.0.1.255', NOW + 7)).toBe(true);
  });

  it('holds many ranges of each version', () => {
    const many = index('ip', [
      ...Array.from({ length: 100 }, (_, i): [string, number] => [`10.${i}.0.0/16`, NOW + i]),
      ...Array.from({ length: 100 }, (_, i): [string, number] => [`2001:db8:${i.toString(16)}::/48`, NOW + i]),
    ]);
    for (let i = 0; i < 100; i++) {
      expect(many.has(`10.${i}.200.1`, NOW + i - 1)).toBe(true);
      expect(many.has(`10.${i}.200.1`, NOW + i)).toBe(false);
      expect(many.has(`2001:db8:${i.toString(16)}::9`, NOW + i - 1)).toBe(true);
      expect(many.has(`2001:db8:${i.toString(16)}::9`, NOW + i)).toBe(false);
    }
  });

  it('sees ranges added and removed after a lookup', () => {
    const live = index('ip', [['10.0.0.0/8', null]]);
    expect(live.has('10.1.2.3', NOW)).toBe(true);
    live.apply([
      { value: '10.0.0.0/8', expiresAt: null, removed: true },
      { value: '2001:db8::/32', expiresAt: null },
    ]);
    expect(live.has('10.1.2.3', NOW)).toBe(false);
    expect(live.has('2001:db8::5', NOW)).toBe(true);
    live.apply([{ value: '10.1.0.0/16', expiresAt: NOW + 5 }]);
    expect(live.has('10.1.2.3', NOW)).toBe(true);
    // A single IPv4 address changes no range.
    live.apply([{ value: '10.2.0.1', expiresAt: null }]);
    expect(live.has('10.2.0.1', NOW)).toBe(true);
    expect(live.has('10.2.0.2', NOW)).toBe(false);
  });
});

// ---- against a naive model: every entry checked with ipaddr.js ----

const octet = fc.integer({ min: 0, max: 255 });
// Addresses from a few small neighbourhoods, so that ranges nest and touch, plus the ends of each space.
const v4 = fc.oneof(
  fc.tuple(fc.constantFrom(0, 10, 255), fc.constantFrom(0, 255), fc.constantFrom(0, 1, 254, 255), octet).map((o) => o.join('.')),
  fc.tuple(octet, octet, octet, octet).map((o) => o.join('.')),
);
const group = fc.oneof(fc.constantFrom(0, 1, 0xffff, 0x8000), fc.integer({ min: 0, max: 0xffff }));
const v6 = fc.oneof(
  fc
    .tuple(fc.constantFrom(0, 0x2001, 0xffff), fc.constantFrom(0, 0xdb8, 0xffff), group, fc.constantFrom(0, 0xffff), group)
    .map(([a, b, c, d, e]) => [a, b, c, d, 0, 0, 0, e].map((g) => g.toString(16)).join(':')),
  fc.array(group, { minLength: 8, maxLength: 8 }).map((g) => g.map((x) => x.toString(16)).join(':')),
);
const entry = fc.oneof(
  v4,
  v6,
  fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([a, n]) => `${a}/${n}`),
  fc.tuple(v6, fc.integer({ min: 0, max: 128 })).map(([a, n]) => `${a}/${n}`),
);
const expiry = fc.oneof(fc.constant(null), fc.integer({ min: NOW - 3, max: NOW + 3 }));

function naive(entries: Map<string, number | null>, address: string, now: number): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  for (const [value, until] of entries) {
    if (until !== null && until <= now) continue;
    const range = ipaddr.parseCIDR(value.includes('/') ? value : `${value}/${value.includes(':') ? 128 : 32}`);
    if (range[0].kind() === addr.kind() && addr.match(range)) return true;
  }
  return false;
}

describe('ListIndex: an ip list agrees with a naive model', () => {
  it('for any entries, expiries, removals and addresses', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(entry, expiry), { maxLength: 40 }),
        fc.array(entry, { maxLength: 10 }),
        fc.array(fc.oneof(v4, v6), { maxLength: 20 }),
        fc.integer({ min: NOW - 4, max: NOW + 4 }),
        (added, removed, probes, now) => {
          const model = new Map<string, number | null>();
          const ix = new ListIndex('ip');
          const values = (raw: string) => (normalizeListValue('ip', raw) as { value: string }).value;
          ix.apply(added.map(([raw, expiresAt]) => ({ value: values(raw), expiresAt })));
          for (const [raw, expiresAt] of added) model.set(values(raw), expiresAt);
          // A lookup before the removals, so that the segments are rebuilt after them.
          ix.has('0.0.0.0', now);
          ix.apply(removed.map((raw) => ({ value: values(raw), expiresAt: null, removed: true as const })));
          for (const raw of removed) model.delete(values(raw));
          expect(ix.size).toBe(model.size);
          // Every probe, each entry's first and last address, and those just outside.
          const edges = [...model.keys()].flatMap((v) => {
            const [a, n] = ipaddr.parseCIDR(v.includes('/') ? v : `${v}/${v.includes(':') ? 128 : 32}`);
            const bytes = a.toByteArray();
            const first =
              a.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${a.toString()}/${n}`) : ipaddr.IPv6.networkAddressFromCIDR(`${a.toString()}/${n}`);
            const last =
              a.kind() === 'ipv4' ? ipaddr.IPv4.broadcastAddressFromCIDR(`${a.toString()}/${n}`) : ipaddr.IPv6.broadcastAddressFromCIDR(`${a.toString()}/${n}`);
            return [first, last, step(first.toByteArray(), -1), step(last.toByteArray(), 1)]
              .filter((x) => x !== null && x.toByteArray().length === bytes.length)
              .map((x) => x!.toString());
          });
          for (const p of [...probes, ...edges]) expect(ix.has(p, now), `${p} at ${now - NOW}`).toBe(naive(model, p, now));
        },
      ),
      { numRuns: 400 },
    );
  });
});

/** The address one above or below (null past either end). */
function step(bytes: number[], by: 1 | -1): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const b = [...bytes];
  for (let i = b.length - 1; i >= 0; i--) {
    b[i]! += by;
    if (b[i]! >= 0 && b[i]! <= 255) return ipaddr.fromByteArray(b);
    b[i] = by === 1 ? 0 : 255;
  }
  return null;
}
