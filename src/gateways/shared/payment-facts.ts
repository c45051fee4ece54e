import { type PaymentFact, type PaymentStatus, paymentKind } from '../../domain/payments/payment-fact.ts';

/** What a gateway says about the money; minor units, undefined when the event does not say. */
export interface ChargeMoney {
  amount: number | undefined;
  amountRefunded: number | undefined;
  currency: string | undefined;
}

/**
 * A currency as the payment row and the outbound contract hold it: an ISO 4217 letter code in upper
 * case, or undefined (not said). What a sender writes there is not trusted to be one: an empty
 * string broke the contract (`currency` of at least one character) and a longer one could not be
 * stored (varchar(3)), which failed every event of its payment until they were dead.
 */
export function upperCurrency(value: unknown): string | undefined {
  return typeof value === 'string' && /^[a-z]{3}$/i.test(value) ? value.toUpperCase() : undefined;
}

/** The canonical fact for one charge event: every payment driver's toPaymentFact ends here. */
export function chargeFact(chargeId: string, status: PaymentStatus, occurredAt: Date, money: ChargeMoney): PaymentFact {
  return { kind: paymentKind(status), chargeId, status, occurredAt, amount: money.amount, amountRefunded: money.amountRefunded, currency: money.currency };
}
