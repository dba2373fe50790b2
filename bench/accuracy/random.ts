// Seeded random streams of the simulation (its own module so that world.ts
// can draw perturbed worlds without importing the population).

export type Rng = () => number;

/** mulberry32: small, fast, good enough for simulation. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
