// Related visitors (issue 36): how often the service's answer
// (server/identification/related.ts, through MemoryIndex.relatedTo) names a
// device's other browsers and profiles, and how often it names another
// device, in the worlds with several browsers per device (world.ts
// RELATED_WORLDS) and in the base world (false relations only).
//
// Each world is simulated as run.ts does (simulate.ts); then, against the
// ground truth (population.ts: every device is one browser instance of a
// `physical` machine):
// - a visitor's owner is the instance most of its visits came from, an
//   instance's main visitor the visitor most of its visits got (a merged
//   visitor's visits count for the one it was merged into);
// - true pairs: two instances of one machine, each with a main visitor;
//   recall is the share whose one main visitor's answer lists the other's,
//   each way (A the machine's earlier instance), and their mean. Two
//   instances merged into one visitor cannot be each other's relative: a
//   miss, counted apart as well;
// - precision: of every answered (visitor, relative) pair of every visitor,
//   the share whose owners are one machine; home pairs apart from those
//   where either owner is in a fleet or in an office shared with coworkers
//   (look-alikes on one network, which must not be related).
// Recall and precision at the service's threshold, and at higher ones.
//
//   node --import tsx bench/accuracy/related.ts [--devices 3000] [--seed 21] [--world 'multi-browser homes' ...]
//     [--perturbed 2] [--threads 1] [--out related.json]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { RELATED_THRESHOLD } from '../../contract/visitors.js';
import type { Components } from '../../server/identification/components.js';
import type { VisitorRecord } from '../../server/identification/linker.js';
import { deviceKey, type Relative } from '../../server/identification/related.js';
import { survivorOf } from './gap.js';
import type { MemoryIndex } from './memoryIndex.js';
import { inWorkers } from './pool.js';
import type { Device } from './population.js';
import { BENCH_PROJECT, round, simulate } from './simulate.js';
import { RELATED_WORLDS, worldNamed } from './world.js';

const THRESHOLDS = [RELATED_THRESHOLD, 0.9, 0.95];

interface Rate {
  n: number;
  hits: number;
}
const rate = (): Rate => ({ n: 0, hits: 0 });
const share = (r: Rate) => (r.n ? round(r.hits / r.n) : null);

export interface RelatedResult {
  world: string;
  seed: number;
  seconds: number;
  /** Browser instances, physical machines, machines with several instances. */
  instances: number;
  machines: number;
  multiMachines: number;
  visitors: number;
  truePairs: number;
  /** True pairs whose two instances ended on one visitor. */
  sameVisitor: number;
  /** Each way a true pair is missed at the service's threshold, why (missCause). */
  misses: Record<string, number>;
  /** At each threshold: recall each way and by the later instance's kind, precision overall, at home, in fleets and offices. */
  at: {
    threshold: number;
    recallAB: number | null;
    recallBA: number | null;
    recall: number | null;
    byKind: Record<string, { pairs: number; recall: number | null }>;
    answered: number;
    precision: number | null;
    home: { answered: number; precision: number | null };
    fleetOffice: { answered: number; precision: number | null };
    /** Answered pairs of different machines, by what the two share. */
    falseBy: Record<string, number>;
    /** Answered pairs of two visitors of one instance (a split the linker has not healed): counted right, one machine. */
    sameInstance: number;
    /** Precision over the other answered pairs. */
    twoInstances: number | null;
    /** Visitors with at least one relative of another machine. */
    visitorsWithFalse: number;
    /** Answered pairs by the evidence family that weighed most, right and wrong. */
    evidence: Record<string, { right: number; wrong: number }>;
  }[];
}

/** One world: simulate, then ask every visitor for its related visitors. */
async function evaluate(worldName: string, devices: number, seed: number): Promise<RelatedResult> {
  const started = performance.now();
  const world = worldNamed(worldName);
  let index: MemoryIndex | undefined;
  let born: Device[] = [];
  /** Visits per (visitor as answered, instance). */
  const visits = new Map<string, Map<number, number>>();
  await simulate(world, devices, seed, {
    trace: (t) => {
      index = t.index;
      born[t.dev] = t.device;
      const perDevice = visits.get(t.match.visitorId) ?? visits.set(t.match.visitorId, new Map()).get(t.match.visitorId)!;
      perDevice.set(t.dev, (perDevice.get(t.dev) ?? 0) + 1);
    },
  });
  born = born.filter((d) => d !== undefined);
  const byId = new Map(born.map((d) => [d.id, d]));
  // Visits per (surviving visitor, instance), then owners and main visitors.
  const survivors = new Map<string, Map<number, number>>();
  for (const [v, perDevice] of visits) {
    const s = survivorOf(index!.visitors, v);
    const into = survivors.get(s) ?? survivors.set(s, new Map()).get(s)!;
    for (const [dev, k] of perDevice) into.set(dev, (into.get(dev) ?? 0) + k);
  }
  const owner = new Map<string, number>();
  const main = new Map<number, { visitor: string; visits: number }>();
  for (const [v, perDevice] of survivors) {
    let top = -1;
    for (const [dev, k] of perDevice) {
      if (top < 0 || k > perDevice.get(top)!) top = dev;
      const m = main.get(dev);
      if (!m || k > m.visits) main.set(dev, { visitor: v, visits: k });
    }
    owner.set(v, top);
  }
  const answers = new Map<string, Relative[]>();
  for (const v of survivors.keys()) answers.set(v, index!.relatedTo(v, BENCH_PROJECT));

  const machines = new Map<number, Device[]>();
  for (const d of born) (machines.get(d.physical) ?? machines.set(d.physical, []).get(d.physical)!).push(d);
  const machinesAt = new Map<number, Set<number>>();
  for (const d of born) if (d.office !== null) (machinesAt.get(d.office) ?? machinesAt.set(d.office, new Set()).get(d.office)!).add(d.physical);
  const lookAlike = (d: Device) => d.fleet !== null || (d.office !== null && machinesAt.get(d.office)!.size > 1);
  const kindOf = (b: Device) => (b.sibling === 'browser' ? `browser (${b.profile.mobile ? 'phone' : 'desktop'})` : b.sibling!);

  const pairs: { a: string; b: string; kind: string }[] = [];
  let sameVisitor = 0;
  for (const ds of machines.values())
    for (let i = 0; i < ds.length; i++)
      for (let j = i + 1; j < ds.length; j++) {
        const a = main.get(ds[i]!.id)?.visitor;
        const b = main.get(ds[j]!.id)?.visitor;
        if (a === undefined || b === undefined) continue;
        if (a === b) sameVisitor++;
        pairs.push({ a, b, kind: kindOf(ds[j]!) });
      }

  const misses: Record<string, number> = {};
  for (const { a, b } of pairs)
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      if (answers.get(x)!.some((r) => r.visitorId === y)) continue;
      const cause = x === y ? 'one visitor' : missCause(index!.visitors.get(x)!, index!.visitors.get(y)!);
      misses[cause] = (misses[cause] ?? 0) + 1;
    }

  const at = THRESHOLDS.map((threshold) => {
    const lists = (v: string) => (answers.get(v) ?? []).filter((r) => r.probability >= threshold).map((r) => r.visitorId);
    const ab = rate();
    const ba = rate();
    const kinds: Record<string, Rate> = {};
    for (const { a, b, kind } of pairs) {
      const k = (kinds[kind] ??= rate());
      const there = lists(a).includes(b);
      const back = lists(b).includes(a);
      ab.n++;
      ba.n++;
      k.n += 2;
      if (there) ab.hits++;
      if (back) ba.hits++;
      k.hits += Number(there) + Number(back);
    }
    const all = rate();
    let sameInstance = 0;
    const home = rate();
    const fleetOffice = rate();
    const falseBy: Record<string, number> = {};
    const evidence: Record<string, { right: number; wrong: number }> = {};
    let visitorsWithFalse = 0;
    for (const [v, relatives] of answers) {
      const x = byId.get(owner.get(v)!)!;
      let wrong = false;
      for (const r of relatives) {
        if (r.probability < threshold) continue;
        const y = byId.get(owner.get(r.visitorId)!)!;
        const right = x.physical === y.physical;
        if (x.id === y.id) sameInstance++;
        const e = (evidence[r.evidence] ??= { right: 0, wrong: 0 });
        e[right ? 'right' : 'wrong']++;
        for (const t of [all, lookAlike(x) || lookAlike(y) ? fleetOffice : home]) {
          t.n++;
          if (right) t.hits++;
        }
        if (right) continue;
        wrong = true;
        const why =
          x.fleet !== null && x.fleet === y.fleet
            ? 'same fleet'
            : x.office !== null && x.office === y.office
              ? 'same office'
              : x.household === y.household
                ? 'same household'
                : 'unrelated';
        falseBy[why] = (falseBy[why] ?? 0) + 1;
      }
      if (wrong) visitorsWithFalse++;
    }
    return {
      threshold,
      recallAB: share(ab),
      recallBA: share(ba),
      recall: share({ n: ab.n + ba.n, hits: ab.hits + ba.hits }),
      byKind: Object.fromEntries(
        Object.entries(kinds)
          .sort()
          .map(([k, r]) => [k, { pairs: r.n / 2, recall: share(r) }]),
      ),
      answered: all.n,
      precision: share(all),
      home: { answered: home.n, precision: share(home) },
      fleetOffice: { answered: fleetOffice.n, precision: share(fleetOffice) },
      falseBy,
      sameInstance,
      twoInstances: share({ n: all.n - sameInstance, hits: all.hits - sameInstance }),
      visitorsWithFalse,
      evidence,
    };
  });
  return {
    world: world.name,
    seed,
    seconds: Math.round((performance.now() - started) / 1000),
    instances: born.length,
    machines: machines.size,
    multiMachines: [...machines.values()].filter((ds) => ds.length > 1).length,
    visitors: survivors.size,
    truePairs: pairs.length,
    sameVisitor,
    misses,
    at,
  };
}

/** Device-key parts (related.ts deviceKey: OS, platform, cores, time zone), read back from the components for the miss causes. */
const KEY_PARTS: [string, (c: Components) => unknown][] = [
  ['OS', (c) => c.browser?.split('|')[1]],
  ['platform', (c) => c.platform],
  ['cores', (c) => (c.hardware ? (JSON.parse(c.hardware) as unknown[])[0] : undefined)],
  ['time zone', (c) => c.timezone],
];

/** Why `y` is not among `x`'s relatives: no list in common (which device-key parts differ, or no network shared), or on one but not answered. */
function missCause(x: VisitorRecord, y: VisitorRecord): string {
  const keys = (v: VisitorRecord) => new Set(v.components.map(deviceKey).filter((k) => k !== null));
  const yKeys = keys(y);
  if (![...keys(x)].some((k) => yKeys.has(k))) {
    const differ = KEY_PARTS.filter(([, f]) => {
      const ys = new Set(y.components.map((c) => JSON.stringify(f(c))));
      return !x.components.some((c) => ys.has(JSON.stringify(f(c))));
    }).map(([name]) => name);
    return `device key: ${differ.join(', ') || 'no one set has all parts'}`;
  }
  if (!x.prefixes.some((p) => y.prefixes.some((q) => q.p === p.p))) return 'no network in common';
  return 'on a list in common, not answered';
}

if (!isMainThread) {
  const { world, devices, seed } = workerData as { world: string; devices: number; seed: number };
  parentPort!.postMessage(await evaluate(world, devices, seed));
} else {
  const { values: args } = parseArgs({
    options: {
      devices: { type: 'string', default: '3000' },
      seed: { type: 'string', default: '21' },
      world: { type: 'string', multiple: true },
      perturbed: { type: 'string', default: '0' },
      threads: { type: 'string', default: '1' },
      out: { type: 'string', default: new URL('./related.json', import.meta.url).pathname },
    },
  });
  const devices = Number(args.devices);
  const seed = Number(args.seed);
  const given = args.world?.length ? args.world : ['base', ...RELATED_WORLDS.map((w) => w.name)];
  // Random perturbations of each world's sibling rates (world.ts perturbedWorld), for robustness.
  const names = [
    ...given,
    ...given.filter((n) => worldNamed(n).siblings).flatMap((n) => Array.from({ length: Number(args.perturbed) }, (_, k) => `${n} ~${k + 1}`)),
  ];
  const started = performance.now();
  const results = await inWorkers<RelatedResult>(
    names.map((world) => ({ world, devices, seed })),
    Number(args.threads),
    (_, r) => console.error(`${r.world}: ${r.seconds}s`),
    new URL(import.meta.url),
  );

  const pct = (x: number | null, d = 2) => (x === null ? '-' : `${(x * 100).toFixed(d)}%`);
  console.log(
    `deviceid related visitors: ${devices} devices per world, seed ${seed}, ${names.length} worlds, ${Math.round((performance.now() - started) / 1000)}s`,
  );
  const main = (r: RelatedResult) => r.at[0]!;
  table(
    `per world, at the service's threshold (p ≥ ${RELATED_THRESHOLD})`,
    [
      'world',
      'instances',
      'machines with several',
      'true pairs',
      'recall A→B',
      'recall B→A',
      'recall',
      'on one visitor',
      'answered',
      'precision',
      'precision, two instances',
      'home answered',
      'home precision',
      'fleet/office answered',
      'fleet/office precision',
    ],
    results.map((r) => {
      const a = main(r);
      return [
        r.world,
        r.instances,
        r.multiMachines,
        r.truePairs,
        pct(a.recallAB),
        pct(a.recallBA),
        pct(a.recall),
        r.sameVisitor,
        a.answered,
        pct(a.precision),
        pct(a.twoInstances),
        a.home.answered,
        pct(a.home.precision),
        a.fleetOffice.answered,
        pct(a.fleetOffice.precision),
      ];
    }),
  );
  const kinds = [...new Set(results.flatMap((r) => Object.keys(main(r).byKind)))].sort();
  table(
    'recall by the later instance: another browser (desktop, phone), another profile, another person at a shared computer (pairs)',
    ['world', ...kinds],
    results
      .filter((r) => r.truePairs)
      .map((r) => [r.world, ...kinds.map((k) => (main(r).byKind[k] ? `${pct(main(r).byKind[k]!.recall)} (${main(r).byKind[k]!.pairs})` : '-'))]),
  );
  const causes = [...new Set(results.flatMap((r) => Object.keys(r.misses)))].sort();
  table(
    `true pairs missed at p ≥ ${RELATED_THRESHOLD}, each way, by cause`,
    ['world', 'missed', ...causes],
    results.filter((r) => r.truePairs).map((r) => [r.world, Object.values(r.misses).reduce((a, b) => a + b, 0), ...causes.map((c) => r.misses[c] ?? 0)]),
  );
  const why = ['same household', 'same office', 'same fleet', 'unrelated'];
  table(
    'false relations (answered pairs of two machines) by what the machines share',
    ['world', 'visitors', 'visitors with one', ...why, 'right: one instance split'],
    results.map((r) => [r.world, r.visitors, main(r).visitorsWithFalse, ...why.map((w) => main(r).falseBy[w] ?? 0), main(r).sameInstance]),
  );
  table(
    'by threshold (recall / precision / home precision / fleet-office precision)',
    ['world', ...THRESHOLDS.map((t) => `p ≥ ${t}`)],
    results.map((r) => [
      r.world,
      ...r.at.map((a) => `${pct(a.recall, 1)} / ${pct(a.precision, 1)} / ${pct(a.home.precision, 1)} / ${pct(a.fleetOffice.precision, 1)}`),
    ]),
  );
  writeFileSync(args.out, `${JSON.stringify({ config: { devices, seed, worlds: names, thresholds: THRESHOLDS }, results }, null, 2)}\n`);
}

/** A markdown table, ready for the README. */
function table(title: string, header: string[], rows: (string | number)[][]) {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  console.log(`\n${title}\n\n${[line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')}`);
}
