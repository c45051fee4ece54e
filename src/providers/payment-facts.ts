import { type PaymentFact, type PaymentStatus, paymentKind } from '../domain/payments/payment-fact.ts';

/** What a gateway says about the money; minor units, undefined when the event does not say. */
export interface ChargeMoney {
  amount: number | undefined;
  amountRefunded: number | undefined;
  currency: string | undefined;
}

/** The canonical fact for one charge event: every payment driver's toPaymentFact ends here. */
export function chargeFact(chargeId: string, status: PaymentStatus, occurredAt: Date, money: ChargeMoney): PaymentFact {
  return { kind: paymentKind(status), chargeId, status, occurredAt, amount: money.amount, amountRefunded: money.amountRefunded, currency: money.currency };
}
