// The curated tables in server/edge/data/: valid by their schemas, each
// citing its source, no AS named twice, every AS present in the ASN data
// (carriers under the very name the data gives), no reserved block twice.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../../server/edge/address.js';
import { asnPackageDir } from '../../../server/edge/asn.js';
import { KNOWN_NETWORKS } from '../../../server/edge/asnCategory.js';
import { CarriersSchema, NetworksSchema, ReservedSchema } from '../../../server/edge/curated.js';

const data = join(import.meta.dirname, '../../../server/edge/data');
const json = (name: string): unknown => JSON.parse(readFileSync(join(data, name), 'utf8'));
const networks = NetworksSchema.parse(json('networks.json'));
const carriers = CarriersSchema.parse(json('mobile-carriers.json'));
const reserved = ReservedSchema.parse(json('reserved.json'));

// ASN → organisation name, as the "-num" CSVs give it (first name seen, as the loader keeps it).
const orgOf = new Map<number, string>();
for (const file of ['asn-ipv4-num.csv', 'asn-ipv6-num.csv']) {
  for (const line of readFileSync(join(asnPackageDir(), file), 'utf8').split('\n')) {
    const m = /^\d+,\d+,(\d+),(.*)$/.exec(line.trimEnd());
    if (!m) continue;
    const org = m[2]!.startsWith('"') ? m[2]!.slice(1, -1).replaceAll('""', '"') : m[2]!;
    if (!orgOf.has(Number(m[1]))) orgOf.set(Number(m[1]), org);
  }
}

const duplicates = (xs: readonly number[]) => xs.filter((x, i) => xs.indexOf(x) !== i);

describe('curated tables', () => {
  it('cite their sources', () => {
    for (const file of [networks, carriers, reserved]) expect(file.source.length).toBeGreaterThan(40);
    for (const group of networks.groups) expect(group.why.length).toBeGreaterThan(20);
  });

  it('name each AS once across the categories, and only ASes the ASN data has', () => {
    const asns = KNOWN_NETWORKS.flatMap((g) => g.networks.map((n) => n.asn));
    expect(duplicates(asns)).toEqual([]);
    expect(asns.filter((asn) => !orgOf.has(asn))).toEqual([]);
    expect(asns.length).toBeGreaterThan(150);
  });

  it('list each carrier AS once, under the name the ASN data gives it', () => {
    expect(duplicates(carriers.carriers.map((c) => c.asn))).toEqual([]);
    const renamed = carriers.carriers.filter((c) => orgOf.get(c.asn) !== c.org).map((c) => `AS${c.asn}: ${c.org} / ${orgOf.get(c.asn)}`);
    expect(renamed).toEqual([]);
    expect(carriers.carriers.length).toBeGreaterThan(250);
  });

  it('hold no reserved block twice or overlapping another, and exceptions only inside reserved space', () => {
    const ranges = reserved.reserved.map((b) => ({ cidr: b.cidr, ...parseCidr(b.cidr)! }));
    const overlaps: string[] = [];
    ranges.forEach((a, i) =>
      ranges.slice(i + 1).forEach((b) => {
        if (a.version === b.version && a.first <= b.last && b.first <= a.last) overlaps.push(`${a.cidr} ${b.cidr}`);
      }),
    );
    expect(overlaps).toEqual([]);
    for (const e of reserved.exceptions) {
      const x = parseCidr(e.cidr)!;
      expect(
        ranges.some((r) => r.version === x.version && r.first <= x.first && x.last <= r.last),
        e.cidr,
      ).toBe(true);
    }
  });

  it('refuse entries that do not fit the schema', () => {
    const group = networks.groups[0]!;
    const withGroup = (g: object) => ({ ...networks, groups: [g] });
    expect(NetworksSchema.safeParse(withGroup({ ...group, category: 'MOBILE_CARRIER' })).success).toBe(false);
    expect(NetworksSchema.safeParse(withGroup({ ...group, networks: [{ asn: '16509', name: 'Amazon' }] })).success).toBe(false);
    expect(NetworksSchema.safeParse(withGroup({ ...group, networks: [{ asn: 16509, name: 'Amazon', typo: 1 }] })).success).toBe(false);
    expect(NetworksSchema.safeParse({ ...networks, source: '' }).success).toBe(false);
    const carrier = carriers.carriers[0]!;
    expect(CarriersSchema.safeParse({ ...carriers, carriers: [{ ...carrier, country: 'usa' }] }).success).toBe(false);
    expect(CarriersSchema.safeParse({ ...carriers, carriers: [{ ...carrier, mobileOnly: 'yes' }] }).success).toBe(false);
    expect(ReservedSchema.safeParse({ ...reserved, reserved: [{ cidr: '10.0.0.0/33', what: 'bad' }] }).success).toBe(false);
    expect(ReservedSchema.safeParse({ ...reserved, reserved: [{ cidr: '10.0.0.1', what: 'an address, not a block' }] }).success).toBe(false);
  });
});
