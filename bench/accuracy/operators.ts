// Real networks for the simulated visits: per country its large home ISPs and
// mobile operators by autonomous system, with addresses drawn from the ranges
// those systems announce (@ip-location-db/asn, the data the service itself
// reads). The service then sees real addresses and decides by itself what
// they are: a carrier it does not know, or one that shares its AS with home
// lines (Deutsche Telekom, Orange, Telefonica, BT/EE...), looks like any
// other address there. Shares are rough market shares; the operator lists are
// the world's truth, independent of the service's carrier table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { asnPackageDir } from '../../server/edge/asn.js';
import type { Rng } from './population.js';

type Share = readonly [asn: number, share: number];

export interface CountryNetworks {
  isps: readonly Share[];
  carriers: readonly Share[];
}

export const NETWORKS: Readonly<Record<string, CountryNetworks>> = {
  US: {
    isps: [
      [7922, 30],
      [20115, 25],
      [7018, 15],
      [701, 10],
      [22773, 10],
      [5650, 10],
    ],
    carriers: [
      [21928, 40],
      [22394, 25],
      [6167, 10],
      [20057, 25],
    ],
  },
  GB: {
    isps: [
      [2856, 35],
      [5089, 20],
      [5607, 25],
      [13285, 20],
    ],
    carriers: [
      [2856, 35],
      [25135, 20],
      [35228, 25],
      [206067, 20],
    ],
  },
  DE: {
    isps: [
      [3320, 45],
      [3209, 30],
      [6805, 15],
      [8881, 10],
    ],
    carriers: [
      [3320, 45],
      [3209, 30],
      [6805, 25],
    ],
  },
  FR: {
    isps: [
      [3215, 40],
      [12322, 25],
      [15557, 20],
      [5410, 15],
    ],
    carriers: [
      [3215, 40],
      [15557, 25],
      [5410, 20],
      [51207, 15],
    ],
  },
  ES: {
    isps: [
      [3352, 40],
      [12479, 25],
      [6739, 20],
      [57269, 15],
    ],
    carriers: [
      [3352, 40],
      [12479, 25],
      [12430, 25],
      [57269, 10],
    ],
  },
  IT: {
    isps: [
      [3269, 45],
      [30722, 15],
      [12874, 20],
      [1267, 20],
    ],
    carriers: [
      [16232, 35],
      [30722, 30],
      [24608, 35],
    ],
  },
  NL: {
    isps: [
      [1136, 45],
      [33915, 40],
      [50266, 15],
    ],
    carriers: [
      [1136, 40],
      [33915, 30],
      [31615, 30],
    ],
  },
  PL: {
    isps: [
      [5617, 45],
      [12741, 30],
      [6830, 25],
    ],
    carriers: [
      [5617, 30],
      [12912, 25],
      [8374, 20],
      [39603, 25],
    ],
  },
  BR: {
    isps: [
      [28573, 35],
      [26599, 35],
      [8167, 30],
    ],
    carriers: [
      [26599, 40],
      [28573, 30],
      [26615, 30],
    ],
  },
  MX: {
    isps: [
      [8151, 60],
      [22884, 20],
      [13999, 20],
    ],
    carriers: [
      [28403, 65],
      [28469, 35],
    ],
  },
  CA: {
    isps: [
      [577, 35],
      [812, 30],
      [6327, 20],
      [5769, 15],
    ],
    carriers: [
      [812, 35],
      [36522, 30],
      [852, 35],
    ],
  },
  IN: {
    isps: [
      [24560, 35],
      [9829, 25],
      [24309, 20],
      [17488, 20],
    ],
    carriers: [
      [55836, 50],
      [45609, 35],
      [38266, 15],
    ],
  },
  JP: {
    isps: [
      [4713, 35],
      [2516, 25],
      [17676, 25],
      [2527, 15],
    ],
    carriers: [
      [9605, 40],
      [2516, 30],
      [17676, 25],
      [138384, 5],
    ],
  },
  KR: {
    isps: [
      [4766, 45],
      [9318, 30],
      [17858, 25],
    ],
    carriers: [
      [9644, 45],
      [4766, 30],
      [17858, 25],
    ],
  },
  CN: {
    isps: [
      [4134, 50],
      [4837, 30],
      [9808, 20],
    ],
    carriers: [
      [9808, 60],
      [4837, 20],
      [4134, 20],
    ],
  },
  TW: {
    isps: [
      [3462, 70],
      [9924, 30],
    ],
    carriers: [
      [3462, 40],
      [24158, 30],
      [4780, 30],
    ],
  },
  ID: {
    isps: [
      [7713, 60],
      [17451, 20],
      [23700, 20],
    ],
    carriers: [
      [23693, 50],
      [4761, 30],
      [24203, 20],
    ],
  },
  TR: {
    isps: [
      [9121, 50],
      [34984, 30],
      [15924, 20],
    ],
    carriers: [
      [16135, 45],
      [15897, 30],
      [9121, 25],
    ],
  },
  RU: {
    isps: [
      [12389, 50],
      [8359, 25],
      [3216, 25],
    ],
    carriers: [
      [8359, 35],
      [31133, 30],
      [3216, 25],
      [15378, 10],
    ],
  },
  AU: {
    isps: [
      [1221, 45],
      [7545, 25],
      [4804, 20],
      [4764, 10],
    ],
    carriers: [
      [1221, 45],
      [4804, 30],
      [133612, 25],
    ],
  },
  PH: {
    isps: [
      [9299, 50],
      [4775, 25],
      [17639, 25],
    ],
    carriers: [
      [10139, 50],
      [132199, 40],
      [139831, 10],
    ],
  },
  VN: {
    isps: [
      [45899, 40],
      [7552, 35],
      [18403, 25],
    ],
    carriers: [
      [7552, 55],
      [45899, 30],
      [131429, 15],
    ],
  },
};

/** Commercial VPN exits (shared by every user of the service). */
export const VPN_ASNS: readonly Share[] = [
  [9009, 60],
  [212238, 40],
];
/** iCloud Private Relay egress operators. */
export const RELAY_ASNS: readonly Share[] = [
  [13335, 45],
  [36183, 35],
  [54113, 20],
];

export function share(r: Rng, xs: readonly Share[]): number {
  let x = r() * xs.reduce((s, [, w]) => s + w, 0);
  for (const [asn, w] of xs) if ((x -= w) < 0) return asn;
  return xs[xs.length - 1]![0];
}

interface Ranges {
  v4: [number, number][];
  v4Total: number;
  v6: [bigint, bigint][];
}

/** Announced ranges of the ASNs the worlds use, read once from the ASN data. */
export class AddressSpace {
  private readonly ranges = new Map<number, Ranges>();

  constructor() {
    const wanted = new Set<number>([...VPN_ASNS, ...RELAY_ASNS].map(([a]) => a));
    for (const c of Object.values(NETWORKS)) for (const [a] of [...c.isps, ...c.carriers]) wanted.add(a);
    const dir = asnPackageDir();
    const get = (asn: number) => this.ranges.get(asn) ?? this.ranges.set(asn, { v4: [], v4Total: 0, v6: [] }).get(asn)!;
    for (const line of readFileSync(join(dir, 'asn-ipv4-num.csv'), 'latin1').split('\n')) {
      const m = /^(\d+),(\d+),(\d+),/.exec(line);
      if (!m || !wanted.has(Number(m[3]))) continue;
      const first = Number(m[1]);
      const last = Number(m[2]);
      // Whole /24s only: a single-address range would make a home's network its one address.
      if (last - first < 255) continue;
      const r = get(Number(m[3]));
      r.v4.push([first, last]);
      r.v4Total += last - first + 1;
    }
    for (const line of readFileSync(join(dir, 'asn-ipv6-num.csv'), 'latin1').split('\n')) {
      const m = /^(\d+),(\d+),(\d+),/.exec(line);
      if (!m || !wanted.has(Number(m[3]))) continue;
      get(Number(m[3])).v6.push([BigInt(m[1]!), BigInt(m[2]!)]);
    }
    for (const a of wanted) if (!this.ranges.get(a)?.v4.length) throw new Error(`AS${a} announces no /24 in the ASN data`);
  }

  hasV6(asn: number): boolean {
    return (this.ranges.get(asn)?.v6.length ?? 0) > 0;
  }

  /** A random IPv4 address of the AS, as text. */
  v4(r: Rng, asn: number): string {
    const { v4, v4Total } = this.ranges.get(asn)!;
    let x = Math.floor(r() * v4Total);
    for (const [first, last] of v4) {
      const n = last - first + 1;
      if (x < n) return ipaddr.fromByteArray(bytes4(first + x)).toString();
      x -= n;
    }
    return ipaddr.fromByteArray(bytes4(v4[0]![0])).toString();
  }

  /** The same /24 as `ip` with another host part. */
  static sameV4Subnet(r: Rng, ip: string): string {
    return `${ip.slice(0, ip.lastIndexOf('.'))}.${1 + Math.floor(r() * 254)}`;
  }

  /**
   * A random IPv6 prefix of the AS of `bits` length (a home's delegated /56,
   * a phone session's /64) with a random interface identifier.
   */
  v6(r: Rng, asn: number, bits: number): string {
    const list = this.ranges.get(asn)!.v6;
    const [first, last] = list[Math.floor(r() * list.length)]!;
    const span = last - first + 1n;
    const offset = randomBig(r, 128) % span;
    const hostBits = BigInt(128 - bits);
    const prefix = ((first + offset) >> hostBits) << hostBits;
    return bigToV6(prefix | (randomBig(r, 64) & ((1n << hostBits) - 1n)));
  }

  /** Another interface identifier in the same /bits prefix (privacy addresses rotate). */
  static sameV6Prefix(r: Rng, ip: string, bits: number): string {
    const n = v6ToBig(ip);
    const hostBits = BigInt(128 - bits);
    return bigToV6(((n >> hostBits) << hostBits) | (randomBig(r, 64) & ((1n << hostBits) - 1n)));
  }
}

const bytes4 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

function randomBig(r: Rng, bits: number): bigint {
  let v = 0n;
  for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(Math.floor(r() * 65536));
  return v;
}

function bigToV6(n: bigint): string {
  const bytes: number[] = [];
  for (let i = 15; i >= 0; i--) bytes.push(Number((n >> BigInt(i * 8)) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

function v6ToBig(ip: string): bigint {
  return ipaddr
    .parse(ip)
    .toByteArray()
    .reduce((v, b) => (v << 8n) | BigInt(b), 0n);
}
