// Oracle ceiling: the best recall any linker could reach on the benchmark's
// visits, so that a missed target can be told apart from an unreachable one.
// Same worlds, devices, seeds and visit streams as run.ts (simulate.ts's
// worldOf), the same edge code for the network, the same revisit categories.
//
// Online, in time order, with perfect discrimination and ideal healing:
// - A visit presenting a token this device presented before keeps that
//   token's visitor (with --integration, the first-party proxy's device
//   cookie counts as one of its tokens).
// - Any other visit (first visit, private window, cleared storage, ITP
//   deletion, no storage) goes to the device's current visitor (that of its
//   last visit) when the device was seen before and is *distinguishable*;
//   else to a new visitor (a split; correct for a first visit).
// - Distinguishable: no other device seen so far has last-visit components
//   (extractComponents, every component) equal to this visit's with the same
//   network fit, i.e. this visit's network key (IPv4 /24 or IPv6 /56 on fixed
//   lines, the AS on mobile carriers, whose CGNAT pools change the prefix
//   per session; none through anonymizers) in both devices' sets of networks
//   used or in neither. Ties go to a new visitor: linking one would risk a
//   false merge, so this oracle never merges devices.
//   With --components stable --network prefix, only the exact key's stable
//   components and every visit's raw prefix are compared: less information,
//   so more ties and a lower ceiling (about 0.7-1 point of recall).
// - Ideal healing: at every visit where the device is distinguishable, all
//   its visitors are re-joined to its first one (that visit and those after
//   count on it). "No healing" is the same oracle without re-joining.
// Recall: revisits on the device's first visitor (or one healed into it).
//
//   node --import tsx bench/accuracy/oracle.ts [--devices 5000] [--seed 1] [--world base ...] [--threads 2] [--components all|stable] [--network carrier-asn|prefix] [--integration]
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { loadAsn, type AsnDb } from '../../server/edge/asn.js';
import { classifyNetwork } from '../../server/edge/asnCategory.js';
import { normalizeIp } from '../../server/edge/address.js';
import { visitNetwork } from '../../server/edge/network.js';
import { COMPONENTS, extractComponents, type ComponentName } from '../../server/identification/components.js';
import type { VisitNetwork } from '../../server/identification/evidence.js';
import { worldOf, type SimVisit } from './simulate.js';
import { worldNamed, WORLDS } from './world.js';

const NO_LISTS = { tor: false, vpn: false, cdn: false, datacenter: false };
const NAMES = Object.keys(COMPONENTS) as ComponentName[];
const STABLE = NAMES.filter((k) => COMPONENTS[k].stable);
const TARGETS = { recall: 0.97, worstRecall: 0.95, privateOrCleared: 0.9, webkit: 0.85 };

/** Revisits and how many of them each oracle recalled. */
class Count {
  revisits = 0;
  healed = 0;
  unhealed = 0;
  add(healed: boolean, unhealed: boolean) {
    this.revisits++;
    if (healed) this.healed++;
    if (unhealed) this.unhealed++;
  }
  get recall() {
    return this.revisits ? this.healed / this.revisits : NaN;
  }
  get recallUnhealed() {
    return this.revisits ? this.unhealed / this.revisits : NaN;
  }
}

export interface OracleResult {
  world: string;
  integration: boolean;
  devices: number;
  events: number;
  revisits: number;
  seconds: number;
  recall: number;
  recallUnhealed: number;
  privateOrCleared: number;
  privateOrClearedUnhealed: number;
  webkit: number;
  webkitUnhealed: number;
  /** Revisits after Safari's 7-day deletion of script storage. */
  itpExpired: number;
  /** Revisits without a surviving token, and the share of them that were ties (lost until healed). */
  tokenless: number;
  tied: number;
  /** Devices still split at the end (healed oracle). */
  split: number;
  /** With `perVisit`: whether each visit, in time order, was a revisit the oracle recalled. */
  recalled?: boolean[];
  /** Blind: share of all visits given a visitor another device created (the linker's false merges). */
  falseMerge?: number;
}

export interface OracleOptions {
  /** Components compared: all of them, or the stable ones of the exact key. */
  components: 'all' | 'stable';
  /** Network key: the prefix, the AS on carriers and none through anonymizers; or the prefix of every visit. */
  network: 'carrier-asn' | 'prefix';
  /** The site uses the first-party proxy integration (its device cookie). */
  integration?: boolean;
  /** Keep which visits the oracle recalled (for the linker's gap decomposition). */
  perVisit?: boolean;
  /**
   * The same rule without ground truth (`blindOracle`): it cannot know
   * that a visit is a revisit, nor which device a visitor is.
   */
  blind?: boolean;
}

/** The network a visit's fit is judged on. */
export function networkKey(n: VisitNetwork, how: OracleOptions['network'] = 'carrier-asn'): string | null {
  if (how === 'prefix') return n.prefix;
  if (n.kind === 'anonymizer' || n.prefix === null) return null;
  return n.kind === 'mobile' && n.asn !== null ? `as:${n.asn}` : n.prefix;
}

/** Who (a device, or a visitor for the blind rule) last showed which components, and the networks each used. */
class Seen {
  private readonly lastKey = new Map<number, string>();
  private readonly nets = new Map<number, Set<string>>();
  private readonly byComponents = new Map<string, Set<number>>();
  /** Those whose last components are `key`. */
  showing(key: string): Iterable<number> {
    return this.byComponents.get(key) ?? [];
  }
  used(id: number, net: string | null): boolean {
    return net !== null && (this.nets.get(id)?.has(net) ?? false);
  }
  record(id: number, key: string, net: string | null) {
    const before = this.lastKey.get(id);
    if (before !== undefined && before !== key) this.byComponents.get(before)!.delete(id);
    if (before !== key) (this.byComponents.get(key) ?? this.byComponents.set(key, new Set()).get(key)!).add(id);
    this.lastKey.set(id, key);
    if (net !== null) (this.nets.get(id) ?? this.nets.set(id, new Set()).get(id)!).add(net);
  }
}

/** A visit's network key and components key, as both oracles compare them. */
function keysOf(sim: SimVisit, asn: AsnDb, compared: readonly ComponentName[], network: OracleOptions['network']) {
  const ip = normalizeIp(sim.ip);
  const asnInfo = ip ? asn.lookup(ip) : null;
  const c = extractComponents(sim.values);
  return { net: networkKey(visitNetwork(ip, asnInfo, classifyNetwork(asnInfo, NO_LISTS)), network), key: compared.map((k) => c[k] ?? '∅').join('\n') };
}

export async function oracle(
  worldName: string,
  size: number,
  seed: number,
  opts: OracleOptions = { components: 'all', network: 'carrier-asn' },
): Promise<OracleResult> {
  if (opts.blind) return blindOracle(worldName, size, seed, opts);
  const started = performance.now();
  const world = worldNamed(worldName);
  const n = world.devices ?? size;
  const asn = await loadAsn();
  const { born, schedule, visits } = worldOf(world, n, seed, { integration: opts.integration });
  const compared = opts.components === 'all' ? NAMES : STABLE;
  const webkitDevice = born.map(({ device: d }) => d.profile.os === 'iOS' || d.profile.family === 'Safari');

  // What the oracle knows of each device.
  const seen = new Seen();
  const tokens = born.map(() => new Map<string, number>());
  const first: number[] = new Array(n);
  const current: number[] = new Array(n);
  const visitorsOf = born.map((): number[] => []);
  // Visitor → the visitor it was healed into (its device's first), or itself.
  const root: number[] = [];

  const all = new Count();
  const privateOrCleared = new Count();
  const webkit = new Count();
  const itp = new Count();
  let tokenless = 0;
  let tied = 0;
  const recalled: boolean[] = [];

  for (const sim of visits()) {
    const { dev, i } = sim;
    const { net, key } = keysOf(sim, asn, compared, opts.network);
    const token = sim.values.deviceToken?.token ?? null;
    const cookie = sim.cookie ? `cookie:${sim.cookie.token}` : null;

    let distinguishable = false;
    if (i > 0) {
      distinguishable = true;
      const mine = seen.used(dev, net);
      for (const other of seen.showing(key)) {
        if (other !== dev && seen.used(other, net) === mine) {
          distinguishable = false;
          break;
        }
      }
    }

    const kept = (token === null ? undefined : tokens[dev]!.get(token)) ?? (cookie === null ? undefined : tokens[dev]!.get(cookie));
    let visitor: number;
    if (kept !== undefined) visitor = kept;
    else if (distinguishable) visitor = current[dev]!;
    else {
      visitor = root.push(root.length) - 1;
      visitorsOf[dev]!.push(visitor);
      if (i === 0) first[dev] = visitor;
    }
    if (distinguishable) for (const v of visitorsOf[dev]!) root[v] = first[dev]!;
    for (const t of [token, cookie]) if (t !== null && !tokens[dev]!.has(t)) tokens[dev]!.set(t, visitor);
    current[dev] = visitor;

    recalled.push(i > 0 && root[visitor] === first[dev]);
    if (i > 0) {
      const healed = root[visitor] === first[dev];
      const unhealed = visitor === first[dev];
      all.add(healed, unhealed);
      if (sim.drift.includes('incognito') || sim.drift.includes('storageCleared')) privateOrCleared.add(healed, unhealed);
      if (webkitDevice[dev]) webkit.add(healed, unhealed);
      if (sim.drift.includes('itpExpired')) itp.add(healed, unhealed);
      if (kept === undefined) {
        tokenless++;
        if (!distinguishable) tied++;
      }
    }

    seen.record(dev, key, net);
  }

  return {
    world: world.name,
    integration: opts.integration ?? false,
    devices: n,
    events: schedule.length,
    revisits: all.revisits,
    seconds: Math.round((performance.now() - started) / 1000),
    recall: all.recall,
    recallUnhealed: all.recallUnhealed,
    privateOrCleared: privateOrCleared.recall,
    privateOrClearedUnhealed: privateOrCleared.recallUnhealed,
    webkit: webkit.recall,
    webkitUnhealed: webkit.recallUnhealed,
    itpExpired: itp.recall,
    tokenless: all.revisits ? tokenless / all.revisits : NaN,
    tied: tokenless ? tied / tokenless : NaN,
    split: visitorsOf.filter((vs, d) => vs.some((v) => root[v] !== first[d])).length,
    ...(opts.perVisit ? { recalled } : {}),
  };
}

/**
 * The oracle's rule as a linker could apply it, without ground truth: a
 * visit whose token (or cookie) a visitor holds goes to that visitor; any
 * other goes to the one visitor whose last components equal the visit's and
 * whose networks hold the visit's network, or, when no visitor with those
 * components has that network, to the only visitor with those components;
 * else to a new visitor. Without truth it cannot tell a revisit from a new
 * device with the same components, which the oracle is told: what that
 * knowledge is worth shows as this rule's false merges. No healing (the
 * oracle's ideal healing is truth too).
 */
async function blindOracle(worldName: string, size: number, seed: number, opts: OracleOptions): Promise<OracleResult> {
  const started = performance.now();
  const world = worldNamed(worldName);
  const n = world.devices ?? size;
  const asn = await loadAsn();
  const { born, schedule, visits } = worldOf(world, n, seed, { integration: opts.integration });
  const compared = opts.components === 'all' ? NAMES : STABLE;
  const webkitDevice = born.map(({ device: d }) => d.profile.os === 'iOS' || d.profile.family === 'Safari');
  const creator: number[] = [];
  const seen = new Seen();
  const tokens = new Map<string, number>();
  const first: number[] = new Array(n);
  const all = new Count();
  const privateOrCleared = new Count();
  const webkit = new Count();
  const itp = new Count();
  let merged = 0;
  let events = 0;
  let tokenless = 0;
  for (const sim of visits()) {
    const { dev, i } = sim;
    const { net, key } = keysOf(sim, asn, compared, opts.network);
    const presented = [sim.values.deviceToken?.token ?? null, sim.cookie?.presented ? `cookie:${sim.cookie.token}` : null];
    let visitor = presented.map((t) => (t === null ? undefined : tokens.get(t))).find((v) => v !== undefined);
    if (visitor === undefined) {
      if (i > 0) tokenless++;
      const same = [...seen.showing(key)];
      const fits = same.filter((v) => seen.used(v, net));
      visitor = fits.length === 1 ? fits[0] : !fits.length && same.length === 1 ? same[0] : undefined;
    }
    if (visitor === undefined) {
      visitor = creator.push(dev) - 1;
    }
    if (i === 0) first[dev] = visitor;
    const token = sim.values.deviceToken?.token ?? null;
    const cookie = sim.cookie ? `cookie:${sim.cookie.token}` : null;
    for (const t of [token, cookie]) if (t !== null && !tokens.has(t)) tokens.set(t, visitor);
    events++;
    if (creator[visitor] !== dev) merged++;
    if (i > 0) {
      const right = visitor === first[dev];
      all.add(right, right);
      if (sim.drift.includes('incognito') || sim.drift.includes('storageCleared')) privateOrCleared.add(right, right);
      if (webkitDevice[dev]) webkit.add(right, right);
      if (sim.drift.includes('itpExpired')) itp.add(right, right);
    }
    seen.record(visitor, key, net);
  }
  return {
    world: world.name,
    integration: opts.integration ?? false,
    devices: n,
    events: schedule.length,
    revisits: all.revisits,
    seconds: Math.round((performance.now() - started) / 1000),
    recall: all.recall,
    recallUnhealed: all.recall,
    privateOrCleared: privateOrCleared.recall,
    privateOrClearedUnhealed: privateOrCleared.recall,
    webkit: webkit.recall,
    webkitUnhealed: webkit.recall,
    itpExpired: itp.recall,
    tokenless: all.revisits ? tokenless / all.revisits : NaN,
    tied: NaN,
    split: 0,
    falseMerge: merged / events,
  };
}

/** Runs each job in a worker thread that loads this module, a few at a time (pool.ts's, for this file). */
async function inWorkers(jobs: { world: string; devices: number; seed: number; opts: OracleOptions }[], threads: number): Promise<OracleResult[]> {
  const out: OracleResult[] = new Array(jobs.length);
  let next = 0;
  const code = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  await Promise.all(
    Array.from({ length: Math.max(1, threads) }, async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        out[i] = await new Promise<OracleResult>((resolve, reject) => {
          const w = new Worker(code, { eval: true, workerData: { ...jobs[i], oracleJob: true } });
          w.once('message', resolve);
          w.once('error', reject);
        });
        console.error(`${out[i]!.world}: ${out[i]!.seconds}s`);
      }
    }),
  );
  return out;
}

// A worker of this file's own (run.ts's workers import it as a module).
if (!isMainThread && (workerData as { oracleJob?: boolean } | null)?.oracleJob) {
  const { world, devices, seed, opts } = workerData as { world: string; devices: number; seed: number; opts: OracleOptions };
  parentPort!.postMessage(await oracle(world, devices, seed, opts));
} else if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values: args } = parseArgs({
    options: {
      devices: { type: 'string', default: '5000' },
      seed: { type: 'string', default: '1' },
      world: { type: 'string', multiple: true },
      threads: { type: 'string', default: String(Math.min(2, availableParallelism())) },
      components: { type: 'string', default: 'all' },
      network: { type: 'string', default: 'carrier-asn' },
      integration: { type: 'boolean', default: false },
      blind: { type: 'boolean', default: false },
    },
  });
  const devices = Number(args.devices);
  const seed = Number(args.seed);
  const names = args.world?.length ? args.world : WORLDS.map((w) => w.name);
  names.forEach(worldNamed);
  if (!['all', 'stable'].includes(args.components) || !['carrier-asn', 'prefix'].includes(args.network))
    throw new Error('--components all|stable, --network carrier-asn|prefix');
  const opts = { components: args.components, network: args.network, integration: args.integration, blind: args.blind } as OracleOptions;
  const started = performance.now();
  const results = await inWorkers(
    names.map((world) => ({ world, devices, seed, opts })),
    Number(args.threads),
  );

  const pct = (x: number, d = 2) => (Number.isFinite(x) ? `${(x * 100).toFixed(d)}%` : '-');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cols = ['recall', 'recallUnhealed', 'privateOrCleared', 'privateOrClearedUnhealed', 'webkit', 'webkitUnhealed', 'itpExpired'] as const;
  const across = (f: (xs: number[]) => number) => cols.map((k) => pct(f(results.map((r) => r[k]))));

  console.log(
    `deviceid oracle ceiling: ${devices} devices per world, seed ${seed}, ${results.length} worlds, components ${opts.components}, network ${opts.network}, ${opts.integration ? 'first-party integration' : 'no integration'}, ${Math.round((performance.now() - started) / 1000)}s`,
  );
  table(
    'per world (ideal healing; "no heal": the same oracle without re-joining)',
    [
      'world',
      'revisits',
      'recall',
      'no heal',
      'private/cleared',
      'no heal',
      'Safari/iOS',
      'no heal',
      'ITP-deleted',
      'no token',
      'of which tied',
      'devices split',
      ...(opts.blind ? ['false merges'] : []),
    ],
    results.map((r) => [
      r.world,
      r.revisits,
      ...cols.map((k) => pct(r[k])),
      pct(r.tokenless),
      pct(r.tied),
      r.split,
      ...(opts.blind ? [pct(r.falseMerge!, 3)] : []),
    ]),
  );
  table(
    'across worlds',
    ['', 'recall', 'no heal', 'private/cleared', 'no heal', 'Safari/iOS', 'no heal', 'ITP-deleted'],
    [
      ['mean', ...across(mean)],
      ['worst', ...across((xs) => Math.min(...xs))],
      [
        'target',
        `≥${pct(TARGETS.recall, 0)} (worst ≥${pct(TARGETS.worstRecall, 0)})`,
        '',
        `≥${pct(TARGETS.privateOrCleared, 0)}`,
        '',
        `≥${pct(TARGETS.webkit, 0)}`,
        '',
        '',
      ],
    ],
  );
}

function table(title: string, header: string[], rows: (string | number)[][]) {
  const all = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  console.log(`\n${title}`);
  for (const r of all) console.log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
}
