// How a decision's probability becomes the confidence an answer carries
// (server/identification/confidence.ts), on a calibration of its own so the
// cases read as numbers: the fitted curve between its knots, held beyond
// them, held low when few signals were collected, rounded and never certain.
// record.test.ts checks the fitted calibration itself.
import { describe, expect, it } from 'vitest';
import { confidenceOf, SPARSE_CEILING, SPARSE_COVERAGE } from '../../../server/identification/confidence.js';

const knots = [
  [0.2, 0.1],
  [0.6, 0.5],
  [0.8, 0.9],
] as const;
const calibration = {
  token: knots,
  exact: knots,
  fuzzy: [[0.5, 0.3]] as const,
  new: [
    [0, -0.2],
    [1, 1.2],
  ] as const,
};
const at = (p: number, coverage = 1, kind: 'token' | 'exact' | 'fuzzy' | 'new' = 'exact') => confidenceOf({ kind, p, coverage }, calibration);

describe('confidence', () => {
  it('follows the fitted curve between its knots, rounded to two decimals', () => {
    expect(at(0.4)).toBe(0.3);
    expect(at(0.7)).toBe(0.7);
    expect(at(0.65)).toBe(0.6);
    expect(at(0.2004)).toBe(0.1);
  });

  it('holds the end values beyond the knots, and reads the decision path’s own curve', () => {
    expect(at(0.05)).toBe(0.1);
    expect(at(0.95)).toBe(0.9);
    expect(at(0.9, 1, 'fuzzy')).toBe(0.3);
  });

  it('is a probability that never claims certainty', () => {
    expect(at(1, 1, 'new')).toBe(0.99);
    expect(at(0, 1, 'new')).toBe(0);
  });

  it('is held low when few of the stable signals were collected, the lower the fewer', () => {
    // At or above the sparse coverage, the curve alone.
    expect(at(0.95, SPARSE_COVERAGE)).toBe(0.9);
    // Below it, at most the ceiling scaled from half (nothing collected) to all of it.
    expect(at(0.95, SPARSE_COVERAGE / 2)).toBeCloseTo(SPARSE_CEILING * 0.75, 10);
    expect(at(0.95, 0)).toBeCloseTo(SPARSE_CEILING / 2, 10);
    // A confidence already below the ceiling stays.
    expect(at(0.4, SPARSE_COVERAGE / 2)).toBe(0.3);
  });
});
