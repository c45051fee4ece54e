/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle]!;
  // Rounded so the mean of 3.2 and 7.9 prints as 5.55, not 5.550000000000001.
  return Number(((sorted[middle - 1]! + sorted[middle]!) / 2).toFixed(6));
}
