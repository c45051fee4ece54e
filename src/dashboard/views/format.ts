/** Human-readable figures for the dashboard; every function is pure. */

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** 0.5 → "50%", undefined (nothing received) → "—". */
export function formatRatio(ratio: number | undefined): string {
  if (ratio === undefined) return '—';
  const percent = ratio * 100;
  return `${percent > 0 && percent < 1 ? percent.toFixed(1) : Math.round(percent)}%`;
}

/** ISO-8601 in UTC to the second: unambiguous for an on-call engineer in any time zone. */
export function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** "14:05" in UTC, for chart ticks and tooltips. */
export function formatClock(date: Date): string {
  return date.toISOString().slice(11, 16);
}
