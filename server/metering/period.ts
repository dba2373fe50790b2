/** The quota period: the calendar month in UTC, `YYYY-MM`. */
export function periodOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** The day of the month in UTC, `DD`: the key of the per-day counter inside a period's usage document. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(8, 10);
}

/** How many days a `YYYY-MM` period has. */
export function daysInPeriod(period: string): number {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Seconds until the next period starts (for Retry-After on a monthly 429). */
export function secondsUntilNextPeriod(ms: number): number {
  const d = new Date(ms);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - ms) / 1000));
}
