// JS engine and CPU traits: floating-point library results and NaN encoding.
import type { Collectors } from '../collector.js';
import { hashJson } from '../hash.js';

/** Huge trig arguments and extreme exponents, where engines' libm implementations round differently. */
function mathResults(): number[] {
  const M = Math;
  return [
    M.acos(0.2718281828),
    M.acosh(1e300),
    M.asin(0.577215664901),
    M.asinh(2),
    M.atan(0.75),
    M.atanh(0.7),
    M.atan2(0.03, -0.9),
    M.cbrt(123),
    M.cos(1e10),
    M.cosh(3),
    M.exp(7.5),
    M.expm1(0.75),
    M.log(3.7),
    M.log1p(12),
    M.log10(17),
    M.log2(11),
    M.pow(M.E, -123),
    M.sin(1e250),
    M.sinh(2.5),
    M.tan(1e200),
    M.tanh(0.9),
    M.hypot(2e-200, 5e-200),
  ];
}

export const engineCollectors: Collectors<'math' | 'architecture'> = {
  math: {
    collect: () => ({ hash: hashJson(mathResults()) }),
  },
  architecture: {
    collect() {
      // x86 FPUs produce a NaN with the sign bit set for Infinity - Infinity; ARM does not.
      const f = new Float32Array(1);
      const bytes = new Uint8Array(f.buffer);
      f[0] = Infinity;
      f[0] = f[0] - f[0];
      return { nanByte: bytes[3]! };
    },
  },
};
