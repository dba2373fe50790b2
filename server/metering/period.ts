/** The quota period: the calendar month in UTC, `YYYY-MM`. */
export function periodOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** Seconds until the next period starts (for Retry-After on a monthly 429). */
export function secondsUntilNextPeriod(ms: number): number {
  const d = new Date(ms);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - ms) / 1000));
}
