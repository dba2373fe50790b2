// One world: a synthetic population visits in time order, each visit from a
// real address through the service's own edge classification, link() and
// the visitor bookkeeping over an in-memory index with the store's
// semantics. Ground truth gives recall, false merges and calibration.
import { createHash } from 'node:crypto';
import { loadAsn, type AsnDb } from '../../server/edge/asn.js';
import { classifyNetwork } from '../../server/edge/asnCategory.js';
import { normalizeIp } from '../../server/edge/address.js';
import { visitNetwork } from '../../server/edge/network.js';
import { coverage, extractComponents } from '../../server/identification/components.js';
import { confidenceOf } from '../../server/identification/confidence.js';
import { link, remembered, type MatchKind, type Visit } from '../../server/identification/linker.js';
import { tokensToPoint, visitTokens } from '../../server/identification/service.js';
import { relatedIndexKey } from '../../server/identification/related.js';
import { LinkedIdKeys } from '../../server/keys/linkedIds.js';
import { DRIFTS, Revisits } from './drift.js';
import { lostAt, splitFate, survivorOf, type Lost } from './gap.js';
import { MemoryIndex } from './memoryIndex.js';
import { NetworkLife, Places } from './network.js';
import type { SignalValues } from '../../contract/signals.js';
import { digest, generatePopulation, rng, signalsOf, type Device, type Rng } from './population.js';
import { SignIns } from './signIns.js';
import type { World } from './world.js';

const NO_LISTS = { tor: false, vpn: false, cdn: false, datacenter: false };
/** The one project of a simulated site (related visitors are per project). */
export const BENCH_PROJECT = 'prj_bench';

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

export class Tally {
  events = 0;
  revisits = 0;
  recalled = 0;
  merged = 0;
  readonly devices = new Set<number>();
  readonly mergedDevices = new Set<number>();
  get recall() {
    return this.revisits ? this.recalled / this.revisits : NaN;
  }
  get falseMerge() {
    return this.events ? this.merged / this.events : NaN;
  }
  json() {
    return {
      devices: this.devices.size,
      events: this.events,
      revisits: this.revisits,
      recall: round(this.recall),
      falseMergeRate: round(this.falseMerge),
      devicesWronglyMerged: this.mergedDevices.size,
    };
  }
}

export const round = (x: number, d = 5) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

/** One decision, for calibration: the path, the decision's probability, the confidence given, and whether it was right. */
export interface Decision {
  kind: MatchKind;
  p: number;
  confidence: number;
  coverage: number;
  correct: boolean;
}

export interface WorldResult {
  world: string;
  /** Whether the site used the first-party proxy integration. */
  integration: boolean;
  devices: number;
  seed: number;
  events: number;
  seconds: number;
  overall: ReturnType<Tally['json']> & {
    pairwiseRecall: number | null;
    pairwisePrecision: number | null;
    devicesSplit: number;
    merges: number;
    unmerges: number;
  };
  /** Revisits in a private window or after cleared storage; revisits of Safari/iOS devices. */
  privateOrCleared: ReturnType<Tally['json']>;
  webkit: ReturnType<Tally['json']>;
  /** Whether the project took the linkedId as evidence; revisits that carried one; false merges between two devices of one customer account. */
  linked: boolean;
  signedIn: ReturnType<Tally['json']>;
  sameAccountMerges: number;
  byKind: Record<string, ReturnType<Tally['json']>>;
  byDrift: Record<string, ReturnType<Tally['json']>>;
  byCohort: Record<string, ReturnType<Tally['json']>>;
  ece: number;
  gap?: Gap;
  reliability: { from: number; to: number; events: number; meanConfidence: number | null; accuracy: number | null }[];
  decisions?: Decision[];
}

function groupsOf(d: Device): string[] {
  const p = d.profile;
  const primary = d.cohort !== 'general' ? d.cohort : p.mobile ? p.os : 'desktop';
  return [primary, ...(p.brave ? ['brave'] : []), ...(d.state.extension ? ['extension'] : []), ...(d.sibling ? [`another ${d.sibling}`] : [])];
}

let asnDb: Promise<AsnDb> | undefined;

export interface SimulateOptions extends WorldOptions {
  /** Keep every decision (for fitting the calibration). */
  keepDecisions?: boolean;
  /** Called with every decision and its ground truth (diagnostics). */
  trace?: (t: Trace) => void;
  /** Called with every visit and the visitor it was given (the HTTP check compares). */
  onVisit?: (v: SimVisit, visitorId: string) => void;
  /** Which visits the oracle recalled (oracle.ts perVisit): the gap is decomposed on them. */
  oracleRecalled?: readonly boolean[];
}

/** The revisits the oracle recalls and the linker does not, by cause (gap.ts), overall and per drift. */
export interface Gap {
  oracleRecalled: number;
  linkerRecalled: number;
  /** Oracle recalled, linker not. */
  missed: number;
  /** Linker recalled, oracle not. */
  beyondOracle: number;
  causes: Record<string, number>;
  byDrift: Record<string, Record<string, number>>;
  /** Devices with a visitor of their own besides the first, and those of them with one never healed into it. */
  splitDevices: number;
  neverHealedDevices: number;
}

export interface Trace {
  device: Device;
  /** The device's number in the world. */
  dev: number;
  i: number;
  drift: string[];
  visit: Visit;
  match: Awaited<ReturnType<typeof link>>;
  merged: boolean;
  recalled: boolean;
  /** The device that created each scored candidate. */
  ownerOf: (visitorId: string) => number | undefined;
  /** The index after the visit (diagnostics). */
  index: MemoryIndex;
}

/** One simulated visit: which device, its how-many-th visit, when, from which address, with what signals. */
export interface SimVisit {
  dev: number;
  i: number;
  t: number;
  ip: string;
  values: Partial<SignalValues>;
  drift: string[];
  /** On a site with the first-party integration: the device cookie the visit presented, or the one issued on it. */
  cookie?: { token: string; presented: boolean };
  /** The customer's account id sent with a signed-in visit (signIns.ts). */
  linkedId?: string;
}

/**
 * The first-party proxy integration's device cookie (server-set, HttpOnly,
 * 400 days): issued on a visit that presents none, presented from the next.
 * It outlives script storage (Safari's 7-day deletion, storage cleared
 * without cookies) but not "clear all site data"; a private window has its
 * own cookie jar, which dies with it. From a random stream of its own, so
 * that the visits are the same with and without the integration.
 */
class CookieJar {
  private kept: string | null = null;
  private issued = 0;
  private readonly r: Rng;

  constructor(
    private readonly dev: number,
    seed: number,
    private readonly cookieCleared: number,
  ) {
    this.r = rng(Math.imul(seed + 7919, 0x85ebca6b) ^ Math.imul(dev + 1, 0xc2b2ae35));
  }

  visit(drift: readonly string[]): { token: string; presented: boolean } {
    const issue = () => digest('cookie', this.dev, this.issued++);
    if (drift.includes('incognito')) return { token: issue(), presented: false };
    if (drift.includes('storageCleared') && this.r() < this.cookieCleared) this.kept = null;
    if (this.kept) return { token: this.kept, presented: true };
    this.kept = issue();
    return { token: this.kept, presented: false };
  }
}

export interface WorldOptions {
  /** The site serves the agent and identify through the first-party proxy integration. */
  integration?: boolean;
  /** The project takes the linkedId as evidence (its setting; default on). */
  linked?: boolean;
}

/** A world's devices and their visits in time order (the HTTP check replays the same stream). */
export function worldOf(world: World, n: number, seed: number, opts: WorldOptions = {}) {
  const born = generatePopulation(n, seed, world);
  const places = new Places(world, seed);
  const sims = born.map((b) => new Revisits(b.device, b.firstDay, seed, world));
  const nets = born.map((b) => new NetworkLife(b.device, places, seed));
  const jars = opts.integration ? born.map((_, dev) => new CookieJar(dev, seed, world.cookieCleared)) : null;
  const signIns = new SignIns(born, seed, world);
  const schedule = sims.flatMap((s, dev) => s.days.map((day, i) => ({ day, dev, i }))).sort((a, b) => a.day - b.day);
  function* visits(): Generator<SimVisit> {
    for (const { dev, i } of schedule) {
      const sim = sims[dev]!.visit(i);
      const cookie = jars?.[dev]!.visit(sim.drift);
      const linkedId = signIns.visit(dev);
      yield {
        dev,
        i,
        t: sim.t,
        ip: nets[dev]!.next(sim.t, sim.drift),
        values: sim.values,
        drift: sim.drift,
        ...(cookie ? { cookie } : {}),
        ...(linkedId ? { linkedId } : {}),
      };
    }
  }
  return { born, sims, schedule, visits, signIns };
}

export async function simulate(world: World, size: number, seed: number, opts: SimulateOptions = {}): Promise<WorldResult> {
  const started = performance.now();
  const n = world.devices ?? size;
  const asn = await (asnDb ??= loadAsn());
  const { born, sims, schedule, visits, signIns } = worldOf(world, n, seed, opts);
  const project = { linkedIdEvidence: opts.linked ?? true };
  const linkedIds = new LinkedIdKeys('bench/accuracy: any secret of 32 characters or more');
  let sameAccountMerges = 0;
  const groups = born.map(({ device }) => groupsOf(device));
  const webkitDevice = born.map(({ device: d }) => d.profile.os === 'iOS' || d.profile.family === 'Safari');

  const index = new MemoryIndex();
  const owner = new Map<string, number>();
  const firstVisitor: string[] = [];
  const visitorsOfDevice = born.map(() => new Set<string>());
  const visitsOf = new Map<string, Map<number, number>>();
  const tallies = new Map<string, Tally>();
  const tally = (key: string) => tallies.get(key) ?? tallies.set(key, new Tally()).get(key)!;
  const decisions: Decision[] = [];
  let merges = 0;
  let unmerges = 0;
  let k = -1;
  const lost: { lost: Lost; dev: number; drift: string[] }[] = [];
  let oracleRecalled = 0;
  let beyondOracle = 0;
  let linkerRecalled = 0;

  for (const sim of visits()) {
    k++;
    const { dev, i } = sim;
    const ip = normalizeIp(sim.ip);
    const asnInfo = ip ? asn.lookup(ip) : null;
    const network = visitNetwork(ip, asnInfo, classifyNetwork(asnInfo, NO_LISTS));
    const components = extractComponents(sim.values);
    const token = sim.values.deviceToken?.token;
    // The tokens as the service combines them (service.ts): the agent's and, through the proxy, the device cookie's.
    const scriptToken = token ? sha(token) : null;
    const cookieToken = sim.cookie ? sha(`cookie:${sim.cookie.token}`) : null;
    const presentedCookie = sim.cookie?.presented ? cookieToken : null;
    const presented = [scriptToken, presentedCookie].filter((t): t is string => t !== null);
    const owners = new Map(await Promise.all(presented.map(async (t) => [t, await index.tokenOwner(t)] as const)));
    const tokens = visitTokens(scriptToken, cookieToken, presentedCookie !== null, owners);
    const { tokenHash } = tokens;
    const ownToken = tokenHash !== null && owner.get(owners.get(tokenHash) ?? '') === dev;
    const visit: Visit = {
      components,
      ...tokens,
      // A signed-in visit's linkedId as the site's server vouches for it (a proof signed with the project's linkedId key,
      // or its first-party proxy's header): evidence on either site.
      linkedId: linkedIds.evidence(sim.linkedId, project),
      network,
      incognito: sim.values.incognito?.likely ?? false,
      now: sim.t,
    };
    const match = await link(index, visit);
    const before = index.record(match, visit);
    const moreTokens = tokensToPoint([scriptToken, cookieToken], tokenHash, owners, match);
    const learnt = remembered(before, match, visit, match.kind === 'new');
    // The related-visitors list a visitor joins on a new network, as the service does (service.ts), for related.ts.
    await index.remember({ ...learnt, moreTokens, related: learnt.newPrefix ? relatedIndexKey(BENCH_PROJECT, components, network) : null });
    if (match.mergedFrom) merges++;
    const cov = coverage(components);
    const confidence = confidenceOf({ kind: match.kind, p: match.p, coverage: cov });

    if (match.kind === 'new') owner.set(match.visitorId, dev);
    if (i === 0) firstVisitor[dev] = match.visitorId;
    if (match.separated) unmerges++;
    visitorsOfDevice[dev]!.add(match.visitorId);
    const perDevice = visitsOf.get(match.visitorId) ?? visitsOf.set(match.visitorId, new Map()).get(match.visitorId)!;
    perDevice.set(dev, (perDevice.get(dev) ?? 0) + 1);
    const merged = owner.get(match.visitorId) !== dev;
    const account = signIns.accountOf[dev];
    if (merged && account !== null && signIns.accountOf[owner.get(match.visitorId) ?? -1] === account) sameAccountMerges++;
    const recalled = i > 0 && match.visitorId === firstVisitor[dev];
    const correct = !merged && (i === 0 || recalled);

    const rows = ['all', `kind:${match.kind}`, ...groups[dev]!.map((g) => `cohort:${g}`)];
    if (i === 0) rows.push('drift:(first visit)');
    else {
      rows.push(...(sim.drift.length ? sim.drift.map((d) => `drift:${d}`) : ['drift:none']));
      if (sim.drift.includes('incognito') || sim.drift.includes('storageCleared')) rows.push('privateOrCleared');
      if (webkitDevice[dev]) rows.push('webkit');
      if (sim.linkedId) rows.push('signedIn');
    }
    for (const key of rows) {
      const t = tally(key);
      t.events++;
      t.devices.add(dev);
      if (i > 0) t.revisits++;
      if (recalled) t.recalled++;
      if (merged) {
        t.merged++;
        t.mergedDevices.add(dev);
      }
    }
    decisions.push({ kind: match.kind, p: match.p, confidence, coverage: cov, correct });
    if (opts.oracleRecalled && i > 0) {
      const byOracle = opts.oracleRecalled[k]!;
      if (byOracle) oracleRecalled++;
      if (recalled) linkerRecalled++;
      if (recalled && !byOracle) beyondOracle++;
      if (byOracle && !recalled) {
        const first = survivorOf(index.visitors, firstVisitor[dev]!);
        lost.push({ lost: lostAt(match, first, (v) => owner.get(v) === dev, ownToken, match.kind === 'new'), dev, drift: sim.drift });
      }
    }
    opts.trace?.({ device: born[dev]!.device, dev, i, drift: sim.drift, visit, match, merged, recalled, ownerOf: (v) => owner.get(v), index });
    opts.onVisit?.(sim, match.visitorId);
  }

  let gap: Gap | undefined;
  if (opts.oracleRecalled) {
    const causes: Record<string, number> = {};
    const byDrift: Record<string, Record<string, number>> = {};
    for (const x of lost) {
      const cause = 'cause' in x.lost ? x.lost.cause : splitFate(index.visitors, x.lost.split, firstVisitor[x.dev]!);
      causes[cause] = (causes[cause] ?? 0) + 1;
      for (const d of x.drift.length ? x.drift : ['none']) (byDrift[d] ??= {})[cause] = (byDrift[d][cause] ?? 0) + 1;
    }
    const ownSplits = born.map((_, dev) => [...visitorsOfDevice[dev]!].filter((v) => owner.get(v) === dev && v !== firstVisitor[dev]));
    const end = (v: string) => survivorOf(index.visitors, v);
    gap = {
      oracleRecalled,
      linkerRecalled,
      missed: lost.length,
      beyondOracle,
      causes: Object.fromEntries(Object.entries(causes).sort((a, b) => b[1] - a[1])),
      byDrift,
      splitDevices: ownSplits.filter((vs) => vs.length).length,
      neverHealedDevices: ownSplits.filter((vs, dev) => vs.some((v) => end(v) !== end(firstVisitor[dev]!))).length,
    };
  }

  const all = tally('all');
  const pairs = (k: number) => (k * (k - 1)) / 2;
  let samePairs = 0;
  let linkedPairs = 0;
  let linkedSamePairs = 0;
  for (const s of sims) samePairs += pairs(s.days.length);
  for (const perDevice of visitsOf.values()) {
    let total = 0;
    for (const k of perDevice.values()) {
      total += k;
      linkedSamePairs += pairs(k);
    }
    linkedPairs += pairs(total);
  }
  const row = (key: string) => (tallies.get(key) ?? new Tally()).json();
  const { ece, reliability } = calibrationOf(decisions);
  return {
    world: world.name,
    integration: opts.integration ?? false,
    devices: born.length,
    seed,
    events: schedule.length,
    seconds: Math.round((performance.now() - started) / 1000),
    overall: {
      ...all.json(),
      pairwiseRecall: round(linkedSamePairs / samePairs),
      pairwisePrecision: round(linkedSamePairs / linkedPairs),
      devicesSplit: visitorsOfDevice.filter((v) => v.size > 1).length,
      merges,
      unmerges,
    },
    privateOrCleared: row('privateOrCleared'),
    webkit: row('webkit'),
    linked: project.linkedIdEvidence,
    signedIn: row('signedIn'),
    sameAccountMerges,
    byKind: Object.fromEntries((['token', 'exact', 'fuzzy', 'new'] as const).map((k) => [k, row(`kind:${k}`)])),
    byDrift: Object.fromEntries(['(first visit)', 'none', ...DRIFTS].map((d) => [d, row(`drift:${d}`)])),
    byCohort: Object.fromEntries(
      [...tallies.keys()]
        .filter((k) => k.startsWith('cohort:'))
        .sort()
        .map((k) => [k.slice(7), row(k)]),
    ),
    ece,
    ...(gap ? { gap } : {}),
    reliability,
    ...(opts.keepDecisions ? { decisions } : {}),
  };
}

/** Expected calibration error over ten equal-width confidence bins, and the reliability table. */
export function calibrationOf(decisions: Decision[]) {
  const bins = Array.from({ length: 10 }, (_, b) => ({ from: b / 10, to: (b + 1) / 10, n: 0, conf: 0, right: 0 }));
  for (const d of decisions) {
    const b = bins[Math.min(9, Math.floor(d.confidence * 10))]!;
    b.n++;
    b.conf += d.confidence;
    if (d.correct) b.right++;
  }
  const total = decisions.length || 1;
  const ece = bins.reduce((e, b) => e + (b.n ? (b.n / total) * Math.abs(b.right / b.n - b.conf / b.n) : 0), 0);
  return {
    ece: round(ece, 4)!,
    reliability: bins.map((b) => ({
      from: b.from,
      to: b.to,
      events: b.n,
      meanConfidence: b.n ? round(b.conf / b.n, 4) : null,
      accuracy: b.n ? round(b.right / b.n, 4) : null,
    })),
  };
}

export { signalsOf };
