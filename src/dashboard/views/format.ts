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

/**
 * An amount in minor units with its currency, as people write it ("R$ 49.90", "¥5,000"): the
 * currency's own decimals. Without a currency, the minor units as stored.
 */
export function formatMoney(minorUnits: number | null, currency: string | null): string {
  if (minorUnits === null) return '—';
  if (!currency) return `${formatCount(minorUnits)} (minor units, no currency)`;
  try {
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    return format.format(minorUnits / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
  } catch {
    return `${formatCount(minorUnits)} ${currency} (minor units)`;
  }
}

/** A stored ISO time (a decision's detail) in the dashboard's one format; text that is not a time stays as it is. */
export function formatIsoTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : formatTime(date);
}
