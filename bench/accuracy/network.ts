// Where each visit comes from: a real client address, drawn from the real
// networks of the device's country (operators.ts), so that the service's own
// edge code decides what the address is (its /24 or IPv6 prefix, its AS, a
// carrier or not). Drawn from separate random streams, so the devices and
// their signals are exactly those of every other run of the same seed.
//
// Assumptions (estimates, varied by the worlds):
// - A household's devices share its home line: one ISP (by market share), an
//   address that the ISP renumbers now and then (about every two months), or
//   a delegated IPv6 /56 on IPv6 lines; behind the ISP's CGNAT a home shares a
//   small pool of addresses with many others and changes address per session.
// - Offices have a fixed business address shared by everyone working there
//   (coworkers, a fleet of identical laptops).
// - Phones use home Wi-Fi half the time and mobile data most of the rest.
//   Behind carrier CGNAT every session gets a new address from the carrier's
//   pool (IPv6 carriers: a new /64 per session); without it a phone keeps its
//   address for about three days.
// - 5 % of portable visits are on public Wi-Fi (a network seen once), as are
//   half of the visits abroad; the other half roam on the home carrier.
// - VPN users send some visits through a commercial VPN exit shared by many
//   users; Private Relay users send every Safari visit through a relay egress.
import { AddressSpace, NETWORKS, RELAY_ASNS, share, VPN_ASNS } from './operators.js';
import { DAY, rng, START, type Device, type Rng } from './population.js';
import type { World } from './world.js';

/** Hazard per day of a home line getting a new address, at the base renumber rate (0.02). */
const RENUMBER_PER_DAY = 1 / 60;
const CGNAT_POOL = 64;
const VPN_EXITS = 300;
const STICKY_DAYS = 3;

interface Line {
  asn: number;
  v6: boolean;
  cgnat: boolean;
  /** Addresses by epoch; a new epoch after each renumbering, drawn from the line's own stream. */
  epochs: { until: number; ip: string }[];
  r: Rng;
}

/** The shared places of one world: homes, offices, CGNAT pools, VPN exits. */
export class Places {
  readonly space = new AddressSpace();
  private readonly homes = new Map<number, Line>();
  private readonly offices = new Map<number, Line>();
  private readonly pools = new Map<string, string[]>();

  constructor(
    readonly world: World,
    private readonly seed: number,
  ) {}

  private stream(kind: number, id: number): Rng {
    return rng((this.seed * 48_271) ^ Math.imul(kind * 1_000_003 + id + 1, 0x27d4eb2d));
  }

  home(d: Device): Line {
    let line = this.homes.get(d.household);
    if (!line) {
      const r = this.stream(1, d.household);
      const isps = NETWORKS[d.profile.country]!.isps;
      const asn = share(r, isps);
      line = { asn, v6: this.space.hasV6(asn) && r() < this.world.ipv6, cgnat: r() < this.world.ispCgnat, epochs: [], r };
      this.homes.set(d.household, line);
    }
    return line;
  }

  office(d: Device): Line {
    const id = d.office!;
    let line = this.offices.get(id);
    if (!line) {
      const r = this.stream(2, id);
      const asn = share(r, NETWORKS[d.profile.country]!.isps);
      line = { asn, v6: false, cgnat: false, epochs: [{ until: Infinity, ip: this.space.v4(r, asn) }], r };
      this.offices.set(id, line);
    }
    return line;
  }

  /** The line's address at time t (renumbering lazily). */
  addressAt(line: Line, t: number, r: Rng): string {
    if (line.cgnat) return AddressSpace.sameV4Subnet(r, this.pool(`isp:${line.asn}`, line.asn)[Math.floor(r() * CGNAT_POOL)]!);
    const hazard = (RENUMBER_PER_DAY * this.world.rates.renumber) / 0.02;
    const lr = line.r;
    while (!line.epochs.length || line.epochs[line.epochs.length - 1]!.until <= t) {
      const from = line.epochs.length ? line.epochs[line.epochs.length - 1]!.until : START - 400 * DAY;
      line.epochs.push({ until: from + (-Math.log(1 - lr()) / hazard) * DAY, ip: line.v6 ? this.space.v6(lr, line.asn, 56) : this.space.v4(lr, line.asn) });
    }
    const ip = line.epochs.find((e) => e.until > t)!.ip;
    return line.v6 ? AddressSpace.sameV6Prefix(r, ip, 64) : AddressSpace.sameV4Subnet(r, ip);
  }

  /** A fixed pool of /24s of an AS: CGNAT egress or VPN exits. */
  pool(key: string, asn: number, size = CGNAT_POOL): string[] {
    let p = this.pools.get(key);
    if (!p) {
      const r = this.stream(4, [...key].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16_777_619), 2_166_136_261) >>> 0);
      p = Array.from({ length: size }, () => this.space.v4(r, asn));
      this.pools.set(key, p);
    }
    return p;
  }
}

export class NetworkLife {
  private readonly r: Rng;
  private readonly carrier: number;
  private readonly carrierV6: boolean;
  private readonly cgnat: boolean;
  private readonly vpn: boolean;
  private readonly relay: boolean;
  private sticky: { ip: string; until: number } | null = null;
  /** Its own stream, so that the rest of a world's networks stay the same with or without clearings away. */
  private readonly away: Rng;

  constructor(
    private readonly device: Device,
    private readonly places: Places,
    seed: number,
  ) {
    const stream = (id: number) => rng((seed * 7_919) ^ Math.imul(id + 1, 0x85ebca6b));
    this.r = stream(device.id);
    const { r } = this;
    const w = places.world;
    const carriers = NETWORKS[device.profile.country]!.carriers;
    // Fleet members share their company's carrier contract; a phone's browsers its SIM (the first draw of the phone's first instance's stream).
    this.carrier = share(device.fleet !== null ? rng(seed * 31 + device.fleet) : device.physical !== device.id ? stream(device.physical) : r, carriers);
    this.carrierV6 = places.space.hasV6(this.carrier) && rng(seed * 977 + this.carrier)() < w.ipv6;
    this.cgnat = rng(seed * 613 + this.carrier)() < w.carrierCgnat;
    this.vpn = r() < w.vpnUsers;
    this.relay = device.profile.family === 'Safari' && r() < w.privateRelay;
    this.away = rng((seed * 104_729) ^ Math.imul(device.id + 1, 0x27d4eb2d));
  }

  /** The client address of a visit at time t with its drift (call once per visit, in order). */
  next(t: number, drift: readonly string[] = []): string {
    const { device: d, places } = this;
    const w = places.world;
    const address = this.usual(t);
    // Drawn after the usual address, from its own stream: the usual stream is the same with or without it.
    if (w.clearedAway && drift.includes('storageCleared') && this.away() < w.clearedAway) {
      return places.space.v4(this.away, share(this.away, NETWORKS[d.profile.country]!.isps));
    }
    return address;
  }

  private usual(t: number): string {
    const { r, device: d, places } = this;
    const w = places.world;
    const p = d.profile;
    const s = d.state;
    if (this.relay) return places.space.v4(r, share(r, RELAY_ASNS));
    if (this.vpn && r() < w.vpnVisits) {
      const asn = share(r, VPN_ASNS);
      return AddressSpace.sameV4Subnet(r, pick(r, places.pool(`vpn:${asn}`, asn, VPN_EXITS)));
    }
    const mobileData = () => this.mobileData(t);
    const home = () => places.addressAt(places.home(d), t, r);
    const office = () => places.addressAt(places.office(d), t, r);
    const publicWifi = (country = p.country) => places.space.v4(r, share(r, NETWORKS[country]!.isps));
    if (s.zone !== s.homeZone) return p.mobile && r() < 0.5 ? mobileData() : publicWifi(NETWORKS[s.zone.country] ? s.zone.country : p.country);
    const x = r();
    const pub = w.rates.publicWifi;
    if (d.cohort === 'fleet-laptop') return x < 0.6 ? office() : x < 1 - pub ? home() : publicWifi();
    if (d.cohort === 'fleet-iphone') return x < 0.4 ? office() : x < 0.9 ? mobileData() : home();
    if (p.mobile) return x < 1 - pub - w.rates.mobileData ? home() : x < 1 - pub ? mobileData() : publicWifi();
    if (!p.portable) return d.office !== null ? office() : x < 0.99 ? home() : publicWifi();
    if (d.office !== null && x < 0.4) return office();
    return x < 1 - pub ? home() : publicWifi();
  }

  private mobileData(t: number): string {
    const { r, places } = this;
    if (this.carrierV6) return places.space.v6(r, this.carrier, 64);
    if (this.cgnat) return AddressSpace.sameV4Subnet(r, pick(r, places.pool(`carrier:${this.carrier}`, this.carrier, 512)));
    if (!this.sticky || this.sticky.until <= t) this.sticky = { ip: places.space.v4(r, this.carrier), until: t + -Math.log(1 - r()) * STICKY_DAYS * DAY };
    return this.sticky.ip;
  }
}

const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
