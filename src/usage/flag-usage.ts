// Pure rules of flag usage (docs/adr/0035-usage-counting.md): hourly buckets, days kept, flush timing.

const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The start of the UTC hour of `at`, as the bucket key (`2026-11-24T09:00:00.000Z`). */
export function hourOf(at: Date): string {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS).toISOString();
}

/** The first bucket of the last `days` days including today (UTC): the start of the day `days - 1` days ago. */
export function sinceDays(now: Date, days: number): string {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return new Date(today - (days - 1) * DAY_MS).toISOString();
}

/** The UTC days (`YYYY-MM-DD`) of the last `days` days, oldest first, today last. */
export function daysUpTo(now: Date, days: number): string[] {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

/**
 * Milliseconds until the next flush: the flush interval, cut short at the next hour so that one flush
 * never carries two hours' evaluations into one bucket (it ends a few ms after the hour).
 */
export function nextFlushDelay(now: Date, intervalMs: number): number {
  const toHour = HOUR_MS - (now.getTime() % HOUR_MS);
  return Math.max(1, Math.min(intervalMs, toHour + 5));
}
