// The knobs of a simulated world. The base world is one guess about real
// traffic; the perturbed worlds move every guess that identification depends
// on (rates halved and doubled, other country mixes, more clone fleets and
// identical phones, more private browsing, carriers with and without CGNAT,
// VPNs and relays, IPv6), so that a rule is kept only when it holds in all of
// them. The linker never sees these numbers.

import { rng } from './random.js';

export interface World {
  name: string;
  /** Country weights (ISO codes of population.ts); missing: the base mix. */
  countries?: Readonly<Record<string, number>>;
  /** Share of devices that are phones. */
  mobileShare: number;
  /** Shares of devices in fleets of identical corporate laptops / managed iPhones. */
  fleetLaptops: number;
  fleetPhones: number;
  /** Mean number of devices per household (1: everyone alone). */
  householdSize: number;
  /** Chance that a household's second and later phones are copies of its first (same model, settings, language). */
  identicalPhones: number;
  /** Share of non-fleet laptops also used at an office, and the mean number of coworkers per office. */
  officeWorkers: number;
  officeSize: number;
  /** Per-visit or per-device rates, multiplied as a group by the rate worlds. */
  rates: Rates;
  /** Share of carriers giving each session a new address from a large pool (CGNAT); the rest keep an address for a while. */
  carrierCgnat: number;
  /** Share of home lines behind the ISP's CGNAT (address shared by many homes, changes often). */
  ispCgnat: number;
  /** Share of homes and carriers on IPv6 (the browser then connects over IPv6). */
  ipv6: number;
  /** Share of devices that use a commercial VPN, and the share of their visits through it. */
  vpnUsers: number;
  vpnVisits: number;
  /** Share of Safari users with iCloud Private Relay (every Safari visit through a relay egress). */
  privateRelay: number;
  /** Visit frequency multiplier (more visits per device per day). */
  visitRate: number;
  /** A site of this many devices whatever the run's size (a young, small account). */
  devices?: number;
  /**
   * Of the storage clearings, the share that also deletes cookies ("clear all
   * site data", the default of every browser's clearing dialog); the rest lose
   * script storage only (storage eviction, cleaners and settings that delete
   * local storage). Matters only to sites with the first-party integration.
   */
  cookieCleared: number;
  /** Devices whose users alternate private and normal windows, and the share of their visits in a private one. */
  privateHabit?: { devices: number; visits: number };
  /** Share of storage clearings made on a network the device never used before (a hotel's or a guest Wi-Fi). */
  clearedAway?: number;
  /**
   * Sign-ins on the site (signIns.ts): the share of households with accounts,
   * the share of those that share one account on all their devices (else each
   * person has one on their 1–3 devices), and the share of a signed-in
   * device's visits that carry its account's linkedId.
   */
  signIn: { households: number; shared: number; visits: number };
  /** Further browser instances on the same home devices (population.ts addSiblings); none when absent. */
  siblings?: Siblings;
}

/**
 * Shares of home devices (not fleets) with more than one browser instance,
 * each with its own token and visits: a visitor each, related visitors of
 * one another (issue 36).
 */
export interface Siblings {
  /** Desktops and laptops, and phones, with a second browser (another family); of those, the share with a third. */
  desktops: number;
  phones: number;
  third: number;
  /** Desktops and laptops whose browser has a second profile. */
  profiles: number;
  /** Desktops and laptops kept at home that 2–4 people share, each with an OS account and a browser of their own. */
  shared: number;
}

export interface Rates {
  storageCleared: number;
  itpLoss: number;
  incognitoDesktop: number;
  incognitoMobile: number;
  travel: number;
  renumber: number;
  languageAdded: number;
  frameChange: number;
  failed: number;
  publicWifi: number;
  mobileData: number;
}

export const BASE_RATES: Rates = {
  storageCleared: 0.025,
  itpLoss: 0.8,
  incognitoDesktop: 0.04,
  incognitoMobile: 0.06,
  travel: 0.006,
  renumber: 0.02,
  languageAdded: 0.008,
  frameChange: 0.03,
  failed: 0.04,
  publicWifi: 0.05,
  mobileData: 0.45,
};

export const BASE_WORLD: World = {
  name: 'base',
  mobileShare: 0.45,
  fleetLaptops: 0.05,
  fleetPhones: 0.01,
  householdSize: 1.8,
  identicalPhones: 0.05,
  officeWorkers: 0.4,
  officeSize: 15,
  rates: BASE_RATES,
  carrierCgnat: 0.8,
  ispCgnat: 0.05,
  ipv6: 0.25,
  vpnUsers: 0.03,
  vpnVisits: 0.5,
  privateRelay: 0.15,
  visitRate: 1,
  cookieCleared: 0.7,
  signIn: { households: 0.4, shared: 0.3, visits: 0.5 },
};

const scaled = (k: number, except: (keyof Rates)[] = []): Rates =>
  Object.fromEntries(Object.entries(BASE_RATES).map(([n, v]) => [n, except.includes(n as keyof Rates) ? v : Math.min(0.95, v * k)])) as unknown as Rates;

const w = (name: string, o: Partial<World>): World => ({ ...BASE_WORLD, ...o, name });

const FLEETS_X3: Partial<World> = { fleetLaptops: 0.15, fleetPhones: 0.03, officeWorkers: 0.6, officeSize: 40 };

/** The worlds the benchmark reports: the base, then one perturbation each. */
export const WORLDS: readonly World[] = [
  BASE_WORLD,
  w('rates x0.5', { rates: scaled(0.5) }),
  w('rates x2', { rates: scaled(2, ['itpLoss']) }),
  w('private x3', { rates: { ...BASE_RATES, incognitoDesktop: 0.12, incognitoMobile: 0.18 } }),
  w('fleets x3', FLEETS_X3),
  w('identical phones', { householdSize: 3, identicalPhones: 0.6, mobileShare: 0.6 }),
  w('no CGNAT', { carrierCgnat: 0, ispCgnat: 0, ipv6: 0 }),
  w('CGNAT + IPv6', { carrierCgnat: 1, ispCgnat: 0.3, ipv6: 0.6 }),
  w('VPN and relays', { vpnUsers: 0.15, vpnVisits: 0.8, privateRelay: 0.5 }),
  w('Europe', { countries: { DE: 18, FR: 14, GB: 14, ES: 9, IT: 9, NL: 8, PL: 8, TR: 5, RU: 5, US: 10 } }),
  w('Asia-Pacific', { countries: { JP: 20, KR: 10, CN: 8, TW: 6, IN: 18, ID: 12, PH: 8, VN: 6, AU: 12 } }),
  w('mobile, rare visits', { mobileShare: 0.7, visitRate: 0.5 }),
  w('frequent visits', { visitRate: 2 }),
  w('small site', { devices: 1000 }),
  // Added with issue 23 from held-out figures (measured as defined, never tuned on a seed).
  w('alternating private', { privateHabit: { devices: 0.15, visits: 0.5 } }),
  w('part-time VPNs', { vpnUsers: 0.3, vpnVisits: 0.3, privateRelay: 0.5 }),
  w('hotel and guest Wi-Fi', { rates: { ...BASE_RATES, publicWifi: 0.3 } }),
  w('rare visitors', { visitRate: 0.25 }),
  w('cleared on a new network', { clearedAway: 0.8 }),
  // Added with issue 23 item 4: families of identical phones signed in to one shared account, most of their visits signed in.
  w('shared accounts', { householdSize: 3, identicalPhones: 0.6, mobileShare: 0.6, signIn: { households: 0.8, shared: 1, visits: 0.8 } }),
];

const NO_SIBLINGS: Siblings = { desktops: 0, phones: 0, third: 0, profiles: 0, shared: 0 };
const MULTI_BROWSER: Siblings = { ...NO_SIBLINGS, desktops: 0.35, phones: 0.25, third: 0.08 };

/**
 * Worlds with several browser instances per physical device, for related
 * visitors (issue 36; measured by related.ts). Apart from WORLDS, so that
 * every-world runs (run.ts, fit.ts, calibrate.ts, oracle.ts) stay comparable
 * with earlier ones. Each keeps at least the base rate of look-alike fleets
 * and offices, whose devices must not be related.
 */
export const RELATED_WORLDS: readonly World[] = [
  w('multi-browser homes', { siblings: MULTI_BROWSER }),
  w('browser profiles', { siblings: { ...NO_SIBLINGS, profiles: 0.15 } }),
  w('shared family computers', { siblings: { ...NO_SIBLINGS, shared: 0.25 } }),
  w('office look-alikes', { ...FLEETS_X3, siblings: MULTI_BROWSER }),
];

/**
 * A random perturbation of a world's sibling rates, for robustness checks:
 * each multiplied by its own factor, log-uniform between 0.5 and 2 (so that
 * halving and doubling are equally likely). Named `<world> ~<seed>`.
 */
export function perturbedWorld(base: World, seed: number): World {
  const r = rng(Math.imul(seed + 1, 0x9e3779b1));
  const s = base.siblings ?? NO_SIBLINGS;
  const k = (x: number) => Math.min(0.95, x * 2 ** (2 * r() - 1));
  return {
    ...base,
    name: `${base.name} ~${seed}`,
    siblings: { desktops: k(s.desktops), phones: k(s.phones), third: k(s.third), profiles: k(s.profiles), shared: k(s.shared) },
  };
}

/**
 * A population drawn at random around a world, for checks of what must hold
 * on strangers (the calibration, issue 36): every rate of drift and storage
 * loss, the look-alike shares (fleets, identical phones, households,
 * offices), the networks (CGNAT, IPv6, VPNs, relays), the share of phones and
 * the visit rate, each multiplied by its own factor, log-uniform between 0.5
 * and 2; shares stay at most 0.95. Named `<world> ≈<seed>`.
 */
export function perturbedPopulation(base: World, seed: number): World {
  const r = rng(Math.imul(seed + 7, 0x85ebca6b));
  const f = () => 2 ** (2 * r() - 1);
  const share = (x: number) => Math.min(0.95, x * f());
  const rates = Object.fromEntries(Object.entries(base.rates).map(([n, v]) => [n, share(v)])) as unknown as Rates;
  return {
    ...base,
    name: `${base.name} ≈${seed}`,
    rates,
    mobileShare: share(base.mobileShare),
    fleetLaptops: share(base.fleetLaptops),
    fleetPhones: share(base.fleetPhones),
    householdSize: Math.max(1, base.householdSize * f()),
    identicalPhones: share(base.identicalPhones),
    officeWorkers: share(base.officeWorkers),
    officeSize: Math.max(2, Math.round(base.officeSize * f())),
    carrierCgnat: share(base.carrierCgnat),
    ispCgnat: share(base.ispCgnat),
    ipv6: share(base.ipv6),
    vpnUsers: share(base.vpnUsers),
    vpnVisits: share(base.vpnVisits),
    privateRelay: share(base.privateRelay),
    visitRate: base.visitRate * f(),
    cookieCleared: share(base.cookieCleared),
    ...(base.privateHabit ? { privateHabit: { devices: share(base.privateHabit.devices), visits: share(base.privateHabit.visits) } } : {}),
    ...(base.clearedAway !== undefined ? { clearedAway: share(base.clearedAway) } : {}),
  };
}

/** A world of WORLDS or RELATED_WORLDS by name, or a perturbation of one (`<world> ~<seed>`, `<world> ≈<seed>`). */
export function worldNamed(name: string): World {
  const perturbed = /^(.*) ~(\d+)$/.exec(name);
  if (perturbed) return perturbedWorld(worldNamed(perturbed[1]!), Number(perturbed[2]));
  const population = /^(.*) ≈(\d+)$/.exec(name);
  if (population) return perturbedPopulation(worldNamed(population[1]!), Number(population[2]));
  const found = [...WORLDS, ...RELATED_WORLDS].find((x) => x.name === name);
  if (!found) throw new Error(`unknown world '${name}'; known: ${[...WORLDS, ...RELATED_WORLDS].map((x) => x.name).join(', ')}`);
  return found;
}
