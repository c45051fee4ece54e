import { minorUnitExponent, rescaleMinorUnits } from '../shared/amounts.ts';

/**
 * Stripe sends integers on its own scale (docs.stripe.com/currencies, "Minor units in API
 * amounts"): its zero-decimal list, its three-decimal list, and hundredths for every other
 * currency. That is ISO 4217's exponent except for two currencies: MGA, which Stripe counts in
 * whole ariary (ISO: hundredths), and ISK, which Stripe keeps "a two-decimal currency in the
 * Stripe API" (its support note on fractional ISK, 2023: 100 is one króna) while ISO gives it no
 * minor unit. HUF and TWD are two-decimal for charges (Stripe treats them as zero-decimal only for
 * payouts), as in ISO; UGX is on Stripe's zero-decimal list, as in ISO.
 */
const STRIPE_ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const STRIPE_THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

function stripeExponent(currency: string): number {
  if (STRIPE_ZERO_DECIMAL.has(currency)) return 0;
  return STRIPE_THREE_DECIMAL.has(currency) ? 3 : 2;
}

/**
 * A Stripe amount in the currency's ISO 4217 minor units: as Stripe sent it, but for MGA (×100)
 * and ISK (÷100; undefined for a fractional króna, which Stripe has refused since 2023 and ISO
 * cannot say). `currency` is upper case, as upperCurrency gives it; undefined leaves the amount as it is.
 */
export function stripeAmountInMinorUnits(amount: number, currency: string | undefined): number | undefined {
  if (currency === undefined) return amount;
  return rescaleMinorUnits(amount, stripeExponent(currency), minorUnitExponent(currency));
}
