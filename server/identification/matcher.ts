// Linking a device to a visitor, after FP-STALKER (Vastel et al., S&P 2018):
// rules that forbid impossible changes, then a weighted component-by-
// component similarity; a link needs a high score and a clear margin over
// the runner-up, otherwise the device is treated as new. Pure functions, so
// the accuracy benchmark runs the same code.
import { COMPONENTS, STABLE_WEIGHT_TOTAL, type ComponentName, type Components } from './components.js';

/** Minimum weighted similarity to link a fuzzy candidate. */
export const LINK_THRESHOLD = 0.8;
/** Minimum lead of the best candidate over the runner-up. */
export const LINK_MARGIN = 0.05;
/** Share of the stable weight both sides must have collected to compare at all. */
export const MIN_OVERLAP = 0.4;
/** A stored device token is believed when the fingerprint agrees at least this much. */
export const TOKEN_CONSISTENCY = 0.6;

const tokens = (s: string) => new Set(s.split(/[\s,|()]+/).filter(Boolean));

function jaccard(a: string, b: string): number {
  const A = tokens(a);
  const B = tokens(b);
  if (A.size === 0 && B.size === 0) return 1;
  let inter = 0;
  for (const t of A) if (B.has(t)) inter++;
  return inter / (A.size + B.size - inter);
}

/** Changes one device cannot make: OS/browser family, platform, CPU, a browser downgrade. */
function forbidden(stored: Components, current: Components): boolean {
  for (const n of ['browser', 'platform', 'hardware'] as const) {
    if (stored[n] !== undefined && current[n] !== undefined && stored[n] !== current[n]) return true;
  }
  if (stored.uaVersion !== undefined && current.uaVersion !== undefined && Number(current.uaVersion) < Number(stored.uaVersion)) {
    return true;
  }
  return false;
}

export interface Similarity {
  score: number;
  /** Share of the stable weight present on both sides. */
  overlap: number;
  forbidden: boolean;
}

export function similarity(stored: Components, current: Components): Similarity {
  let weight = 0;
  let matched = 0;
  let stableBoth = 0;
  for (const name of Object.keys(COMPONENTS) as ComponentName[]) {
    const spec = COMPONENTS[name];
    const a = stored[name];
    const b = current[name];
    if (a === undefined || b === undefined) continue;
    const s = a === b ? 1 : 'fuzzy' in spec && spec.fuzzy ? jaccard(a, b) : 0;
    weight += spec.weight;
    matched += spec.weight * s;
    if (spec.stable) stableBoth += spec.weight;
  }
  return {
    score: weight === 0 ? 0 : matched / weight,
    overlap: stableBoth / STABLE_WEIGHT_TOTAL,
    forbidden: forbidden(stored, current),
  };
}

export interface Candidate {
  visitorId: string;
  /** The visitor's last component sets (newest first). */
  history: Components[];
}

export interface FuzzyDecision {
  visitorId: string | null;
  score: number;
  margin: number;
}

/** Best fuzzy candidate if it clears the threshold by a margin; else no link. */
export function decide(candidates: Candidate[], current: Components): FuzzyDecision {
  const scored = candidates
    .map((c) => {
      const best = Math.max(
        0,
        ...c.history.map((h) => {
          const s = similarity(h, current);
          return s.forbidden || s.overlap < MIN_OVERLAP ? 0 : s.score;
        }),
      );
      return { visitorId: c.visitorId, score: best };
    })
    .sort((a, b) => b.score - a.score);
  const [first, second] = scored;
  if (!first) return { visitorId: null, score: 0, margin: 0 };
  const margin = first.score - (second?.score ?? 0);
  const linked = first.score >= LINK_THRESHOLD && margin >= LINK_MARGIN;
  return { visitorId: linked ? first.visitorId : null, score: first.score, margin };
}

/** Whether a visitor named by a device token plausibly is this device (a copied token is not). */
export function tokenConsistent(history: Components[], current: Components): boolean {
  return history.some((h) => {
    const s = similarity(h, current);
    return !s.forbidden && (s.overlap < MIN_OVERLAP || s.score >= TOKEN_CONSISTENCY);
  });
}
