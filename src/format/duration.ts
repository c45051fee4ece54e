/**
 * One way to print a duration, for the CLI and the dashboard alike: 0.012 → "12ms", 75 → "1m15s",
 * 7500 → "2h05m", 200000 → "2d07h". The two largest units are enough to act on; below a second
 * the milliseconds, because a healthy processing lag lives there. Undefined or not finite → "—".
 */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '—';
  const ms = Math.round(seconds * 1000);
  if (ms > 0 && ms < 1000) return `${ms}ms`;
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}
