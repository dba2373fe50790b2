// Runs one world in a worker thread (run.ts and fit.ts run two at a time on
// two cores). With `collect`, it returns every fingerprint decision's
// candidates and which of them was right, for fit.ts; with `oracle`, the
// oracle's ceiling on the same visits beside the linker's result (run.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { Features } from '../../server/identification/evidence.js';
import { oracle } from './oracle.js';
import { simulate } from './simulate.js';
import { worldNamed } from './world.js';

/** One fingerprint decision: each candidate's features and whether it is the visiting device's own visitor. */
export interface Choice {
  candidates: { f: Features; right: boolean }[];
}

const { world, devices, seed, collect, keepDecisions, integration, linked, withOracle } = workerData as {
  world: string;
  devices: number;
  seed: number;
  collect?: boolean;
  keepDecisions?: boolean;
  integration?: boolean;
  linked?: boolean;
  withOracle?: boolean;
};
const choices: Choice[] = [];
// The oracle first: the linker's gap is decomposed on the revisits the oracle recalls.
const ceiling = withOracle ? await oracle(world, devices, seed, { components: 'all', network: 'carrier-asn', integration, perVisit: true }) : undefined;
const result = await simulate(worldNamed(world), devices, seed, {
  keepDecisions,
  integration,
  linked,
  oracleRecalled: ceiling?.recalled,
  trace: collect
    ? (t) => {
        const scored = t.match.scored;
        if (scored?.length) choices.push({ candidates: scored.map((s) => ({ f: s.features, right: t.ownerOf(s.visitorId) === t.device.id })) });
      }
    : undefined,
});
if (ceiling) delete ceiling.recalled;
parentPort!.postMessage(collect ? { result, choices } : ceiling ? { ...result, oracle: ceiling } : result);
