/**
 * Minor-unit exponents other than 2, from ISO 4217 list one (published 2024-06-25, the `CcyMnrUnts`
 * column): a CLP or JPY amount has no minor unit, a BHD or KWD one has thousandths. Every other
 * code, and the codes ISO gives no minor unit at all (XAU, XDR, … no gateway charges in them),
 * counts in hundredths. Stripe's own scale differs for two of them (src/gateways/stripe/amounts.ts).
 */
const EXPONENTS_OTHER_THAN_TWO: ReadonlyMap<string, number> = new Map([
  ...['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'].map((code) => [code, 0] as const),
  ...['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((code) => [code, 3] as const),
  ...['CLF', 'UYW'].map((code) => [code, 4] as const),
]);

/** How many decimal digits the currency's minor unit has (ISO 4217); 2 when the currency is not said. */
export function minorUnitExponent(currency: string | undefined): number {
  return (currency === undefined ? undefined : EXPONENTS_OTHER_THAN_TWO.get(currency.toUpperCase())) ?? 2;
}

/**
 * Gateways that send decimal amounts (Asaas `100.00`, Zoop `"5.00"`, Mercado Pago `1500` CLP) are
 * converted to the currency's minor units with string arithmetic: `Math.round(19.99 * 100)` happens
 * to work, `1.005 * 100` does not, and a payments table must not depend on luck. A JSON number is
 * read through `String(n)`, the shortest text that round-trips, so `0.29` is the digits "0.29",
 * never 0.28999…. Undefined when the value is not a plain decimal, or is finer than the currency's
 * minor unit (`100.5` JPY, `1.2345` KWD): malformed, never rounded, since rounding would make up or
 * drop money the gateway never moved. Zeros past the minor unit are fine (`1500.00` CLP is 1500).
 */
export function decimalToMinorUnits(value: unknown, currency: string | undefined): number | undefined {
  const exponent = minorUnitExponent(currency);
  let text: string;
  if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (typeof value === 'string') text = value.trim();
  else return undefined;
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, sign, whole = '', fraction = ''] = match;
  if (/[^0]/.test(fraction.slice(exponent))) return undefined;
  const minor = Number(BigInt(whole + fraction.slice(0, exponent).padEnd(exponent, '0')));
  if (!Number.isSafeInteger(minor)) return undefined;
  return sign === '-' ? -minor : minor;
}

/**
 * An integer amount on one scale (10^-from of the unit) on another: exact or undefined. Stripe
 * states ISK in hundredths, which ISO 4217 does not have: 4000 is 40 króna, and 4010 is not a
 * whole króna.
 */
export function rescaleMinorUnits(amount: number, fromExponent: number, toExponent: number): number | undefined {
  const factor = 10 ** Math.abs(toExponent - fromExponent);
  const rescaled = toExponent >= fromExponent ? amount * factor : amount / factor;
  return Number.isSafeInteger(rescaled) ? rescaled : undefined;
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
