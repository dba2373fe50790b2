// Where each visit comes from: the client's network as identification sees
// it (an IPv4 /24). Drawn from a separate random stream so the devices and
// their signals are exactly those of the runs without networks.
//
// Assumptions (estimates, like the population's distributions):
// - Each country has 5 residential ISPs (shares 35/25/18/12/10 %) with
//   16,384 /24s each in the site's catchment, and 3 mobile carriers
//   (45/35/20 %). Behind carrier-grade NAT a phone gets a new address per
//   session, so the service compares carriers, not /24s, there.
// - A home connection keeps its /24 except for a renumbering on 2 % of visits
//   (dynamic addresses, router restarts).
// - Desktops visit from home. 40 % of laptops are also used at an office
//   (40 % of their visits); fleet laptops share their company's office
//   network (60 %) and otherwise work from their own homes. Phones are on home
//   Wi-Fi half the time and on mobile data 45 %; managed iPhones use the
//   company's Wi-Fi (40 %) and carrier (50 %). 5 % of portable visits are on
//   public Wi-Fi (a network seen once), as is every visit while travelling.
import { rng, type Device, type Rng } from './population.js';

const ISP_SHARES = [0.35, 0.25, 0.18, 0.12, 0.1];
const CARRIER_SHARES = [0.45, 0.35, 0.2];
const HOME_POOL = 16_384;

function share(r: Rng, shares: readonly number[]): number {
  let x = r();
  for (let i = 0; i < shares.length; i++) if ((x -= shares[i]!) < 0) return i;
  return shares.length - 1;
}

export class NetworkLife {
  private readonly r: Rng;
  private readonly isp: number;
  private readonly carrier: number;
  private home: string;
  private readonly office: string | null;
  private oneOff = 0;

  constructor(
    private readonly device: Device,
    seed: number,
  ) {
    this.r = rng((seed * 7_919) ^ Math.imul(device.id + 1, 0x85ebca6b));
    const { r } = this;
    const p = device.profile;
    this.isp = share(r, ISP_SHARES);
    this.home = this.residential();
    // Fleet members share their company's carrier contract.
    this.carrier = share(device.fleet !== null ? rng(seed * 31 + device.fleet) : r, CARRIER_SHARES);
    const commuter = device.fleet === null && p.portable && !p.mobile && r() < 0.4;
    this.office = device.fleet !== null ? `office:${device.fleet}` : commuter ? `office:d${device.id}` : null;
  }

  private residential() {
    return `home:${this.device.profile.country}:${this.isp}:${Math.floor(this.r() * HOME_POOL)}`;
  }

  /** The network of the next visit (call once per visit, in order). */
  next(first: boolean): string {
    const { r, device } = this;
    const p = device.profile;
    const s = device.state;
    if (!first && r() < 0.02) this.home = this.residential();
    const publicWifi = () => `public:${device.id}:${++this.oneOff}`;
    if (s.zone !== s.homeZone) return publicWifi();
    // The service compares a mobile carrier's addresses by the carrier's AS (server/edge/ip.ts networkOf).
    const carrier = () => `carrier:${p.country}:${this.carrier}`;
    const x = r();
    if (device.cohort === 'fleet-laptop') return x < 0.6 ? this.office! : x < 0.95 ? this.home : publicWifi();
    if (device.cohort === 'fleet-iphone') return x < 0.4 ? this.office! : x < 0.9 ? carrier() : this.home;
    if (p.mobile) return x < 0.5 ? this.home : x < 0.95 ? carrier() : publicWifi();
    if (!p.portable) return x < 0.99 ? this.home : publicWifi();
    if (this.office && x < 0.4) return this.office;
    return x < 0.95 ? this.home : publicWifi();
  }
}
