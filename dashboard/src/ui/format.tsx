// Dates and counts as people read them: "24 Nov 2026, 05:10" (today: "today, 05:10"), "1 attempt".

const DAY = 86_400_000;
const dateTime = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });

/** A short readable date and time; empty for none. */
export function formatDate(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const startOfToday = new Date(now);
  startOfToday.setHours(0, 0, 0, 0);
  const t = at.getTime();
  if (t >= startOfToday.getTime() && t < startOfToday.getTime() + DAY) return `today, ${time.format(at)}`;
  if (t >= startOfToday.getTime() - DAY && t < startOfToday.getTime()) return `yesterday, ${time.format(at)}`;
  return dateTime.format(at);
}

/** The full date, for a `title` or a `<time>`'s tooltip. */
export const formatFullDate = (iso: string) => full.format(new Date(iso));

/** `<time>` with the short text and the full date on hover. */
export function DateText({ iso }: { iso: string | null | undefined }) {
  if (!iso) return null;
  return (
    <time dateTime={iso} title={formatFullDate(iso)}>
      {formatDate(iso)}
    </time>
  );
}

/** "1 attempt", "3 attempts", "1 entry" / "2 entries" with `plural`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}
