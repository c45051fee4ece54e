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

/** 0.0123 → "12 ms", 95 → "1 min 35 s", 7300 → "2 h 1 min". */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '—';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) {
    const rest = Math.round(seconds - minutes * 60);
    return rest > 0 ? `${minutes} min ${rest} s` : `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 > 0 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** ISO-8601 in UTC to the second: unambiguous for an on-call engineer in any time zone. */
export function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** "14:05" in UTC, for chart ticks and tooltips. */
export function formatClock(date: Date): string {
  return date.toISOString().slice(11, 16);
}
