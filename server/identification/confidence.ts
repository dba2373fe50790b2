// confidence = P(the visitor returned is this device's own), from the
// decision's own probability (linker.ts Match.p) through a monotone map per
// decision path fitted on bench/accuracy (isotonic regression on seeds and
// worlds other than those it is checked on; bench/accuracy/calibrate.ts
// writes calibration.ts). "Right" means the visitor is the one the device
// got on its first visit and no other device's. Tampering and privacy
// browsers need no term of their own: their farbled signals already lower
// the decision's probability, and the calibration sees them.
import { CALIBRATION } from './calibration.js';
import type { MatchKind } from './linker.js';

export interface ConfidenceInput {
  kind: MatchKind;
  /** The decision's probability (Match.p). */
  p: number;
  /** Share of the stable signals collected. */
  coverage: number;
}

/** Piecewise-linear through the fitted (p, confidence) knots. */
function interpolate(knots: readonly (readonly [number, number])[], p: number): number {
  if (p <= knots[0]![0]) return knots[0]![1];
  for (let i = 1; i < knots.length; i++) {
    const [x1, y1] = knots[i]!;
    if (p <= x1) {
      const [x0, y0] = knots[i - 1]!;
      return x1 === x0 ? y1 : y0 + ((y1 - y0) * (p - x0)) / (x1 - x0);
    }
  }
  return knots[knots.length - 1]![1];
}

/**
 * Below this share of the stable signals, the benchmark has too few
 * decisions to calibrate on, and what is left of the fingerprint cannot
 * confirm a match: confidence is then held under SPARSE_CEILING (the spec:
 * low values mean many signals failed to collect).
 */
export const SPARSE_COVERAGE = 0.6;
export const SPARSE_CEILING = 0.6;

/** Rounded to two decimals and capped at 0.99: no identification is certain. (Another calibration: the benchmark's held-out checks.) */
export function confidenceOf(
  { kind, p, coverage }: ConfidenceInput,
  calibration: Record<MatchKind, readonly (readonly [number, number])[]> = CALIBRATION,
): number {
  let c = interpolate(calibration[kind], Math.min(1, Math.max(0, p)));
  if (coverage < SPARSE_COVERAGE) c = Math.min(c, SPARSE_CEILING * (0.5 + coverage / SPARSE_COVERAGE / 2));
  return Math.min(0.99, Math.max(0, Math.round(c * 100) / 100));
}
