export function formatPercent(ratio: number | null): string {
  return ratio === null ? '-' : `${(ratio * 100).toFixed(1)}%`;
}

export function formatSeconds(value: number): string {
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

/** Columns padded to their widest cell; numbers (and the headers above them) right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^[-\d.,%]+$/.test(r[i] ?? '')));
  return all
    .map((r) =>
      r
        .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
