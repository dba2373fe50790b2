// Linking a device to a visitor, after FP-STALKER (Vastel et al., S&P 2018):
// rules that forbid impossible changes, then a weighted component-by-
// component similarity; a link needs a high score and a clear margin over
// the runner-up, otherwise the device is treated as new. Pure functions, so
// the accuracy benchmark runs the same code.
import { COMPONENTS, STABLE_WEIGHT_TOTAL, type ComponentName, type Components } from './components.js';

/**
 * Minimum weighted similarity to link a fuzzy candidate: high, so only drift
 * in low-weight components (updates, an added language, failed signals) is
 * tolerated. bench/accuracy: 0.8 linked look-alikes (87 % of fuzzy links were
 * another device); 0.93/0.95/0.97 traded recall for false merges, 0.95 best.
 */
export const LINK_THRESHOLD = 0.95;
/** Minimum lead of the best candidate over the runner-up. */
export const LINK_MARGIN = 0.05;
/** Share of the stable weight both sides must have collected to compare at all. */
export const MIN_OVERLAP = 0.4;
/**
 * A stored device token is believed when the fingerprint agrees at least this
 * much. Legitimate drift with a token (travel, docking, farbled core count)
 * scores above 0.75 with the weights above; unrelated devices mostly below
 * 0.7. bench/accuracy: no own token rejected between 0.6 and 0.7.
 */
export const TOKEN_CONSISTENCY = 0.7;

const tokens = (s: string) => new Set(s.split(/[\s,|()]+/).filter(Boolean));

function jaccard(a: string, b: string): number {
  const A = tokens(a);
  const B = tokens(b);
  if (A.size === 0 && B.size === 0) return 1;
  let inter = 0;
  for (const t of A) if (B.has(t)) inter++;
  return inter / (A.size + B.size - inter);
}

/**
 * Changes one device cannot make: OS/browser family, platform, a browser
 * downgrade. Not the hardware: Brave and anti-fingerprinting extensions
 * randomise the core count per session (bench/accuracy: Brave recall 19 %
 * with it, its own tokens were rejected); its weight does the work instead.
 */
function forbidden(stored: Components, current: Components): boolean {
  for (const n of ['browser', 'platform'] as const) {
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
