// Time is injected so tests can move it instead of sleeping.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.t;
  }
  set(t: number): void {
    this.t = t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
