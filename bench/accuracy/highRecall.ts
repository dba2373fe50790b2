// The high-recall id's frontier (issue 36 item 4): a second grouping of
// visitors that links more generously than visitorId and never splits what
// it joins. A visitor created because no candidate reached the link
// threshold joins the group of its best candidate when that candidate's
// posterior is at least `born`; a young visitor whose later visits raise its
// best suspect's healing posterior (the linker's, before its own merge
// threshold) to at least `later` joins that suspect's group; a merge of
// visitorIds joins their groups. Each visit is answered the group of its
// visitorId. Measured per world, for several rules at once, on the visits the service's own linker decides
// (simulate.ts), with the same definitions as visitorId's: recall (a
// revisit answered the group of the device's first visit) and false merges
// (a visit answered a group another device started).
//
//   node --import tsx bench/accuracy/highRecall.ts [--devices 3000] [--seed 31] [--world base ...] [--threads 2]
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { survivorOf } from './gap.js';
import { inWorkers } from './pool.js';
import { simulate } from './simulate.js';
import { worldNamed, WORLDS } from './world.js';

/** Join thresholds at a visitor's creation and on its later visits (1: never). */
export const RULES = [
  { born: 0.1, later: 1 },
  { born: 0.3, later: 1 },
  { born: 0.5, later: 1 },
  { born: 0.5, later: 0.5 },
  { born: 0.7, later: 0.5 },
  { born: 0.7, later: 0.7 },
  { born: 0.8, later: 0.6 },
  { born: 0.7, later: 0.3 },
  { born: 1, later: 0.3 },
] as const;
const label = (r: (typeof RULES)[number]) => `born ${r.born}, later ${r.later}`;

interface Row {
  rule: string;
  recall: number;
  falseMerges: number;
}
interface Result {
  world: string;
  visits: number;
  revisits: number;
  visitorId: { recall: number; falseMerges: number };
  service: { recall: number; falseMerges: number };
  rows: Row[];
}

/** Union-find over visitor ids; a root is its group's oldest visitor (joined groups keep the older root). */
class Groups {
  private readonly parent = new Map<string, string>();
  private readonly born = new Map<string, number>();
  add(id: string, at: number) {
    if (!this.born.has(id)) this.born.set(id, at);
  }
  find(id: string): string {
    let r = id;
    while (this.parent.has(r)) r = this.parent.get(r)!;
    for (let x = id; x !== r;) {
      const next = this.parent.get(x)!;
      this.parent.set(x, r);
      x = next;
    }
    return r;
  }
  join(a: string, b: string) {
    const [x, y] = [this.find(a), this.find(b)];
    if (x === y) return;
    const [older, younger] = (this.born.get(x) ?? 0) <= (this.born.get(y) ?? 0) ? [x, y] : [y, x];
    this.parent.set(younger, older);
  }
}

async function measure(world: string, devices: number, seed: number): Promise<Result> {
  const groups = RULES.map(() => new Groups());
  const owner = new Map<string, number>();
  const first = new Map<number, string>();
  const tally = RULES.map(() => ({ recalled: 0, merged: 0 }));
  let visits = 0;
  let revisits = 0;
  let seq = 0;
  const base = { recalled: 0, merged: 0 };
  // The rule the service runs (linker.ts HIGH_RECALL_*), as identify answers it: the visitor's group after the visit.
  const service = { recalled: 0, merged: 0 };
  const firstGroup = new Map<number, string>();
  await simulate(worldNamed(world), devices, seed, {
    trace: ({ dev, i, match, index }) => {
      visits++;
      seq++;
      if (match.kind === 'new') owner.set(match.visitorId, dev);
      if (i === 0) first.set(dev, match.visitorId);
      const best = match.kind === 'new' && !match.uncorroborated ? match.scored?.[0] : undefined;
      const pBest = best ? Math.exp(best.logOdds) * match.p : 0;
      // A young visitor's later visit: its suspects re-weighed (p is the posterior that it is a device of its own).
      const suspect =
        match.kind === 'token' && match.suspects?.length ? match.suspects.reduce((x, y) => (y.logOdds + y.net > x.logOdds + x.net ? y : x)) : undefined;
      groups.forEach((g, k) => {
        g.add(match.visitorId, seq);
        if (best && pBest >= RULES[k]!.born) g.join(match.visitorId, best.visitorId);
        if (suspect && 1 - match.p >= RULES[k]!.later) g.join(match.visitorId, suspect.id);
        if (match.mergedFrom) g.join(match.mergedFrom, match.visitorId);
        const root = g.find(match.visitorId);
        if (owner.get(root) !== dev) tally[k]!.merged++;
        if (i > 0 && root === g.find(first.get(dev)!)) tally[k]!.recalled++;
      });
      const survivor = (id: string) => survivorOf(index.visitors, id);
      const answered = index.visitors.get(match.visitorId)?.highRecall ?? match.visitorId;
      if (i === 0) firstGroup.set(dev, answered);
      if (owner.get(answered) !== dev) service.merged++;
      if (i > 0 && survivor(answered) === survivor(firstGroup.get(dev)!)) service.recalled++;
      if (owner.get(match.visitorId) !== dev) base.merged++;
      if (i > 0) {
        revisits++;
        if (match.visitorId === first.get(dev)) base.recalled++;
      }
    },
  });
  return {
    world,
    visits,
    revisits,
    visitorId: { recall: base.recalled / revisits, falseMerges: base.merged / visits },
    service: { recall: service.recalled / revisits, falseMerges: service.merged / visits },
    rows: RULES.map((r, k) => ({ rule: label(r), recall: tally[k]!.recalled / revisits, falseMerges: tally[k]!.merged / visits })),
  };
}

if (!isMainThread) {
  const { world, devices, seed } = workerData as { world: string; devices: number; seed: number };
  parentPort!.postMessage(await measure(world, devices, seed));
} else {
  const { values: args } = parseArgs({
    options: {
      devices: { type: 'string', default: '3000' },
      seed: { type: 'string', default: '31' },
      world: { type: 'string', multiple: true },
      threads: { type: 'string', default: String(Math.min(2, availableParallelism())) },
    },
  });
  const names = args.world?.length ? args.world : WORLDS.map((w) => w.name);
  const results = await inWorkers<Result>(
    names.map((world) => ({ world, devices: Number(args.devices), seed: Number(args.seed) })),
    Number(args.threads),
    (_, r) => console.error(`${r.world}: done`),
    new URL(import.meta.url),
  );
  const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
  console.log(`| world | visitorId | highRecallVisitorId | ${RULES.map(label).join(' | ')} |`);
  console.log(`| --- | --- | --- | ${RULES.map(() => '---').join(' | ')} |`);
  const cell = (x: { recall: number; falseMerges: number }) => `${pct(x.recall)} / ${pct(x.falseMerges)}`;
  for (const r of results) console.log(`| ${r.world} | ${cell(r.visitorId)} | ${r.rows.map(cell).join(' | ')} |`);
  const mean = (f: (r: Result) => number) => results.reduce((s, r) => s + f(r), 0) / results.length;
  const meanOf = (f: (r: Result) => { recall: number; falseMerges: number }) =>
    cell({ recall: mean((r) => f(r).recall), falseMerges: mean((r) => f(r).falseMerges) });
  console.log(`| **mean** | ${meanOf((r) => r.visitorId)} | ${meanOf((r) => r.service)} | ${RULES.map((_, k) => meanOf((r) => r.rows[k]!)).join(' | ')} |`);
  console.log('\nEach cell: recall / false merges.');
}
