/**
 * Gateways that send decimal amounts (Asaas `100.00`, Zoop `"5.00"`) are converted to minor units
 * with string arithmetic: `Math.round(19.99 * 100)` happens to work, `1.005 * 100` does not, and
 * a payments table must not depend on luck. A JSON number is read through `String(n)`, the
 * shortest text that round-trips, so `100.1` is the digits "100.1", never 100.09999….
 * Undefined when the value is not a plain decimal or is finer than the minor unit.
 */
export function decimalToMinorUnits(value: unknown, fractionDigits = 2): number | undefined {
  let text: string;
  if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (typeof value === 'string') text = value.trim();
  else return undefined;
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, sign, whole = '', fraction = ''] = match;
  if (/[^0]/.test(fraction.slice(fractionDigits))) return undefined;
  const minor = Number(BigInt(whole + fraction.slice(0, fractionDigits).padEnd(fractionDigits, '0')));
  if (!Number.isSafeInteger(minor)) return undefined;
  return sign === '-' ? -minor : minor;
}

/** An integer amount already in minor units, as a number or a digit string (form-encoded bodies). */
export function integerMinorUnits(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}
