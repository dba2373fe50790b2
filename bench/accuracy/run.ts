// Accuracy benchmark: a synthetic population visits in time order and every
// visit goes through the service's own link() / remember() over an in-memory
// LinkIndex with the MongoDB index's semantics. With ground truth we measure
// same-device recall, false merges and confidence calibration.
//
//   node --import tsx bench/accuracy/run.ts [--devices 50000] [--seed 1] [--no-network] [--out results.json]
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { coverage, exactKey, extractComponents, type Components } from '../../server/identification/components.js';
import { confidenceOf } from '../../server/identification/confidence.js';
import { link, remember, type LinkIndex } from '../../server/identification/linker.js';
import { LINK_MARGIN, LINK_THRESHOLD, MIN_OVERLAP, TOKEN_CONSISTENCY } from '../../server/identification/matcher.js';
import { assessRisk } from '../../server/risk/engine.js';
import type { EdgeFacts } from '../../server/risk/edgeFacts.js';
import { PARTIAL_CAP } from '../../server/store/fingerprints.js';
import { withOrigin, type TokenUse } from '../../server/store/visitors.js';
import { DRIFTS, Revisits } from './drift.js';
import { NetworkLife } from './network.js';
import { generatePopulation, signalsOf, WINDOW_DAYS, type Device } from './population.js';

/** The MongoDB index's semantics (service.ts index(), store/fingerprints.ts, store/visitors.ts) in memory. */
class MemoryIndex implements LinkIndex {
  private readonly tokens = new Map<string, string>();
  private readonly exact = new Map<string, string>();
  private readonly partials = new Map<string, string[]>();
  private readonly visitors = new Map<string, { components: Components; previous: Components | null; networks: string[]; tokens: TokenUse[]; firstSeenAt: number }>();
  private seq = 0;

  async tokenOwner(t: string) {
    return this.tokens.get(t) ?? null;
  }
  async exactOwner(k: string) {
    return this.exact.get(k) ?? null;
  }
  async candidates(keys: string[]) {
    return [...new Set(keys.flatMap((k) => this.partials.get(k) ?? []))];
  }
  async history(id: string) {
    const v = this.visitors.get(id);
    return v ? { components: [v.components, ...(v.previous ? [v.previous] : [])], networks: v.networks, tokens: v.tokens, firstSeenAt: v.firstSeenAt } : null;
  }
  async createVisitor(components: Components) {
    const id = `v${++this.seq}`;
    // The first recordVisit sets firstSeenAt, as the service creates a visitor at its first visit's time.
    this.visitors.set(id, { components, previous: null, networks: [], tokens: [], firstSeenAt: Number.NaN });
    return id;
  }
  async dropVisitor(id: string) {
    this.visitors.delete(id);
  }
  /** Unique insert: the first writer keeps the key. */
  private static claim(map: Map<string, string>, key: string, id: string) {
    const owner = map.get(key);
    if (owner !== undefined) return owner;
    map.set(key, id);
    return id;
  }
  async claimExact(k: string, id: string) {
    return MemoryIndex.claim(this.exact, k, id);
  }
  async claimToken(t: string, id: string) {
    return MemoryIndex.claim(this.tokens, t, id);
  }
  async setToken(t: string, id: string) {
    this.tokens.set(t, id);
  }
  async moveToken(t: string, from: string, to: string) {
    if (this.tokens.get(t) === from) this.tokens.set(t, to);
    return this.tokens.get(t)!;
  }
  async addPartials(keys: string[], id: string) {
    for (const k of keys) {
      const ids = this.partials.get(k) ?? [];
      if (ids[0] !== id) this.partials.set(k, [id, ...ids.filter((x) => x !== id)].slice(0, PARTIAL_CAP));
    }
  }
  /** visitors.recordVisit: this visit becomes the current component set, the old current the previous one. */
  recordVisit(id: string, components: Components, origin: { network: string | null; tokenHash: string | null }, now: number) {
    const v = this.visitors.get(id)!;
    if (Number.isNaN(v.firstSeenAt)) v.firstSeenAt = now;
    v.previous = v.components;
    v.components = components;
    Object.assign(v, withOrigin(v.networks, v.tokens, origin, now));
  }
}

/** A plain residential connection: the risk engine then only sees the client signals. */
const EDGE: EdgeFacts = {
  ip: '198.51.100.7',
  ipVersion: 4,
  isPrivate: false,
  prefix: '198.51.100.0/24',
  network: '198.51.100.0/24',
  location: { country: '', city: '', region: '', latitude: null, longitude: null, timezone: null },
  asn: { asn: 64500, org: 'Example ISP', category: 'RESIDENTIAL_ISP', isDatacenter: false },
  lists: { torExit: false, blocklisted: false, proxy: false, vpn: false, datacenter: false },
  tls: { cipher: null, version: null, ja4: null },
  http: { fingerprint: '', classification: 'browser' },
};

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

class Tally {
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
    return { devices: this.devices.size, events: this.events, revisits: this.revisits, recall: round(this.recall), falseMergeRate: round(this.falseMerge), devicesWronglyMerged: this.mergedDevices.size };
  }
}

const round = (x: number, d = 5) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
const pct = (x: number, d = 2) => (Number.isFinite(x) ? `${(x * 100).toFixed(d)}%` : '-');

function groupsOf(d: Device, twin: boolean): string[] {
  const p = d.profile;
  const primary = d.cohort !== 'general' ? d.cohort : p.mobile ? p.os : 'desktop';
  return [primary, twin ? 'twins' : 'distinct', ...(p.brave ? ['brave'] : []), ...(d.state.extension ? ['extension'] : [])];
}

const BUCKETS = [0.99, 0.95, 0.9, 0.8, 0.7, 0.5, 0.3, 0] as const;
const bucketOf = (c: number) => BUCKETS.find((b) => c >= b)!;

async function main() {
  const { values: args } = parseArgs({
    options: { devices: { type: 'string', default: '50000' }, seed: { type: 'string', default: '1' }, 'no-network': { type: 'boolean', default: false }, out: { type: 'string', default: new URL('./results.json', import.meta.url).pathname } },
  });
  // Without networks every fingerprint link goes through, as before network evidence existed.
  const withNetworks = !args['no-network'];
  const n = Number(args.devices);
  const seed = Number(args.seed);
  if (!Number.isInteger(n) || n < 1 || !Number.isInteger(seed)) throw new Error('usage: run.ts [--devices N] [--seed S]');
  const started = performance.now();

  const born = generatePopulation(n, seed);
  // Fingerprints of each device's clean first visit: how many devices share one (before any drift).
  const exactCount = new Map<string, number>();
  const fullCount = new Map<string, number>();
  const keys = born.map(({ device }) => {
    const c = extractComponents(signalsOf(device.profile, device.state));
    const k = { exact: exactKey(c)!, full: JSON.stringify(c) };
    exactCount.set(k.exact, (exactCount.get(k.exact) ?? 0) + 1);
    fullCount.set(k.full, (fullCount.get(k.full) ?? 0) + 1);
    return k;
  });
  const twin = keys.map((k) => exactCount.get(k.exact)! > 1);
  const groups = born.map(({ device }, i) => groupsOf(device, twin[i]!));
  const uniqueShare = (mobile: boolean, kind: 'exact' | 'full', counts: Map<string, number>) => {
    const ids = born.filter((b) => b.device.profile.mobile === mobile).map((b) => b.device.id);
    return ids.filter((i) => counts.get(keys[i]![kind]) === 1).length / ids.length;
  };

  const sims = born.map((b) => new Revisits(b.device, b.firstDay, seed));
  const nets = born.map((b) => new NetworkLife(b.device, seed));
  const schedule = sims.flatMap((s, dev) => s.days.map((day, i) => ({ day, dev, i }))).sort((a, b) => a.day - b.day);

  const index = new MemoryIndex();
  const owner = new Map<string, number>();
  const firstVisitor: string[] = [];
  const visitorsOfDevice = born.map(() => new Set<string>());
  /** Visits per visitor and device, for the pairwise measures. */
  const visitsOf = new Map<string, Map<number, number>>();
  const tallies = new Map<string, Tally>();
  const tally = (key: string) => tallies.get(key) ?? tallies.set(key, new Tally()).get(key)!;
  const calibration = new Map<string, { n: number; predicted: number; wrong: number }>();

  for (const { dev, i } of schedule) {
    const visit = sims[dev]!.visit(i);
    const network = withNetworks ? nets[dev]!.next(i === 0) : null;
    const components = extractComponents(visit.values);
    const token = visit.values.deviceToken?.token;
    const tokenHash = token ? sha(token) : null;
    // A token the index has never seen: a first visit, or a known device after clearing storage.
    const freshToken = tokenHash !== null && (await index.tokenOwner(tokenHash)) === null;
    const match = await link(index, components, tokenHash, network);
    index.recordVisit(match.visitorId, components, { network, tokenHash: match.tokenRejected ? null : tokenHash }, visit.t);
    await remember(index, match, components, tokenHash);
    const distorted = assessRisk(visit.values, EDGE, [], visit.t).distorted;
    const confidence = confidenceOf({ kind: match.kind, coverage: coverage(components), score: match.score, margin: match.margin, distorted, joinedByFingerprint: match.joinedByFingerprint });

    if (match.kind === 'new') owner.set(match.visitorId, dev);
    if (i === 0) firstVisitor[dev] = match.visitorId;
    visitorsOfDevice[dev]!.add(match.visitorId);
    const perDevice = visitsOf.get(match.visitorId) ?? visitsOf.set(match.visitorId, new Map()).get(match.visitorId)!;
    perDevice.set(dev, (perDevice.get(dev) ?? 0) + 1);
    const merged = owner.get(match.visitorId) !== dev;
    const recalled = i > 0 && match.visitorId === firstVisitor[dev];
    const correct = !merged && (i === 0 || recalled);

    const rows = ['all', `kind:${match.kind}`, ...groups[dev]!.map((g) => `cohort:${g}`)];
    if (freshToken && (match.kind === 'exact' || match.kind === 'fuzzy')) rows.push(`fresh:${match.kind}`);
    // No token is ever copied between devices here, so every rejection is of the token's own device.
    if (match.tokenRejected) rows.push('tokenRejected');
    if (i === 0) rows.push('drift:(first visit)');
    else rows.push(...(visit.drift.length ? visit.drift.map((d) => `drift:${d}`) : ['drift:none']));
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
    const cal = `${match.kind === 'token' && match.joinedByFingerprint ? 'token (joined by fingerprint)' : match.kind}|${bucketOf(confidence)}`;
    const c = calibration.get(cal) ?? calibration.set(cal, { n: 0, predicted: 0, wrong: 0 }).get(cal)!;
    c.n++;
    c.predicted += 1 - confidence;
    if (!correct) c.wrong++;
  }
  const seconds = (performance.now() - started) / 1000;

  const all = tally('all');
  const splitDevices = visitorsOfDevice.filter((v) => v.size > 1).length;
  const devicesPerVisitor = new Map<string, Set<number>>();
  visitorsOfDevice.forEach((vs, dev) => vs.forEach((v) => (devicesPerVisitor.get(v) ?? devicesPerVisitor.set(v, new Set()).get(v)!).add(dev)));
  const impureVisitors = [...devicesPerVisitor.values()].filter((s) => s.size > 1).length;
  const row = (key: string) => tallies.get(key) ?? new Tally();
  // Pairwise measures (as for clustering): of all pairs of visits by one device, the share given one
  // visitor; of all pairs of visits given one visitor, the share by one device. Unlike recall they
  // do not depend on which visitor a device got first, so telling merged devices apart counts as a gain.
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

  const population = {
    devices: n,
    desktop: born.filter((b) => !b.device.profile.mobile).length,
    mobile: born.filter((b) => b.device.profile.mobile).length,
    byOs: count(born.map((b) => b.device.profile.os)),
    byBrowser: count(born.map((b) => `${b.device.profile.family} (${b.device.profile.os})`)),
    uniqueExactKey: { desktop: round(uniqueShare(false, 'exact', exactCount), 4), mobile: round(uniqueShare(true, 'exact', exactCount), 4) },
    uniqueFullFingerprint: { desktop: round(uniqueShare(false, 'full', fullCount), 4), mobile: round(uniqueShare(true, 'full', fullCount), 4) },
    twins: twin.filter(Boolean).length,
  };
  const results = {
    config: { devices: n, seed, networks: withNetworks, events: schedule.length, revisits: all.revisits, windowDays: WINDOW_DAYS, runtimeSeconds: Math.round(seconds) },
    matcher: { LINK_THRESHOLD, LINK_MARGIN, MIN_OVERLAP, TOKEN_CONSISTENCY, PARTIAL_CAP },
    population,
    overall: { ...all.json(), pairwiseRecall: round(linkedSamePairs / samePairs), pairwisePrecision: round(linkedSamePairs / linkedPairs), devicesSplit: splitDevices, visitorsWithSeveralDevices: impureVisitors, visitorsPerDevice: round(visitorsOfDevice.reduce((s, v) => s + v.size, 0) / n, 3) },
    // What linking a never-seen token by fingerprint yields: merges of look-alikes vs. recovered devices.
    freshTokenLinks: { exact: row('fresh:exact').json(), fuzzy: row('fresh:fuzzy').json() },
    tokenRejected: row('tokenRejected').json(),
    byKind: Object.fromEntries((['token', 'exact', 'fuzzy', 'new'] as const).map((k) => [k, { share: round(row(`kind:${k}`).events / all.events, 4), ...row(`kind:${k}`).json() }])),
    byDrift: Object.fromEntries(['(first visit)', 'none', ...DRIFTS].map((d) => [d, row(`drift:${d}`).json()])),
    byCohort: Object.fromEntries(
      [...tallies.keys()]
        .filter((k) => k.startsWith('cohort:'))
        .sort()
        .map((k) => [k.slice(7), row(k).json()]),
    ),
    calibration: [...calibration.entries()]
      .map(([k, c]) => {
        const [kind, bucket] = k.split('|');
        return { kind, confidenceAtLeast: Number(bucket), events: c.n, predictedError: round(c.predicted / c.n, 4), observedError: round(c.wrong / c.n, 4) };
      })
      .sort((a, b) => a.kind!.localeCompare(b.kind!) || b.confidenceAtLeast - a.confidenceAtLeast),
  };
  writeFileSync(args.out!, `${JSON.stringify(results, null, 2)}\n`);

  const { config: c, overall: o } = results;
  console.log(`deviceid accuracy benchmark: ${c.devices} devices, seed ${c.seed}${c.networks ? '' : ', no networks'}, ${c.events} events (${c.revisits} revisits) over ${c.windowDays} days, ${c.runtimeSeconds}s`);
  console.log(
    `population: ${population.desktop} desktop / ${population.mobile} mobile; unique exact key ${pct(population.uniqueExactKey.desktop!, 1)} desktop, ${pct(population.uniqueExactKey.mobile!, 1)} mobile; ` +
      `unique full fingerprint ${pct(population.uniqueFullFingerprint.desktop!, 1)} / ${pct(population.uniqueFullFingerprint.mobile!, 1)}; ${population.twins} devices share their exact key`,
  );
  console.log(`pairwise: recall ${pct(o.pairwiseRecall!)} of same-device visit pairs linked, precision ${pct(o.pairwisePrecision!)} of linked pairs from one device`);
  console.log(`overall: recall ${pct(all.recall)}, false-merge rate ${pct(all.falseMerge, 3)}, devices wrongly merged ${o.devicesWronglyMerged} (${pct(o.devicesWronglyMerged / n)}), devices split ${o.devicesSplit}, visitors per device ${o.visitorsPerDevice}`);
  const fresh = results.freshTokenLinks;
  console.log(
    `never-seen token linked by fingerprint: exact ${fresh.exact.events} (${pct(fresh.exact.falseMergeRate ?? NaN, 1)} to another device), fuzzy ${fresh.fuzzy.events} (${pct(fresh.fuzzy.falseMergeRate ?? NaN, 1)} to another device); own token rejected ${results.tokenRejected.events} times`,
  );
  table('by match kind', ['kind', 'share', ...HEADER], Object.entries(results.byKind).map(([k, r]) => [k, pct(r.share!, 1), ...cells(r)]));
  table('by drift (revisits carrying it; a visit can carry several)', ['drift', ...HEADER], Object.entries(results.byDrift).map(([k, r]) => [k, ...cells(r)]));
  table('by cohort', ['cohort', ...HEADER], Object.entries(results.byCohort).map(([k, r]) => [k, ...cells(r)]));
  table(
    "calibration (error: not the device's first visitor, or another device's visitor)",
    ['kind', 'confidence >=', 'events', 'predicted err', 'observed err'],
    results.calibration.map((r) => [r.kind!, r.confidenceAtLeast, r.events, pct(r.predictedError!), pct(r.observedError!)]),
  );
}

function count(xs: string[]) {
  const m: Record<string, number> = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return Object.fromEntries(Object.entries(m).sort((a, b) => b[1] - a[1]));
}

function table(title: string, header: string[], rows: (string | number)[][]) {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  console.log(`\n${title}`);
  for (const r of cells) console.log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
}

type Row = ReturnType<Tally['json']>;
const cells = (r: Row) => [r.devices, r.events, r.revisits, r.recall === null ? '-' : pct(r.recall), r.falseMergeRate === null ? '-' : pct(r.falseMergeRate, 3), r.devicesWronglyMerged];
const HEADER = ['devices', 'events', 'revisits', 'recall', 'false merge', 'merged dev'];

await main();
