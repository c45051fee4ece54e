import type { Transaction } from '../db/client.ts';
import { applyPaymentEvent } from '../domain/payments/apply-payment-event.ts';
import type { KnownFact } from '../domain/payments/fold.ts';
import { paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import type { EventHandler, InboxEvent } from './handlers.ts';
import { selectKnownResourceEvents } from './inbox-sql.ts';

/**
 * The charge's other events that have been processed or ignored, read back as payment facts.
 * Drivers key payment events by their charge (resource_id = the fact's chargeId), which is also
 * what serialises them; a dispute's events carry its charge's id.
 */
async function otherKnownFacts(tx: Transaction, event: InboxEvent): Promise<KnownFact[]> {
  if (event.stored.resourceId === null) return [];
  const rows = await selectKnownResourceEvents(tx, event.stored.provider, event.stored.resourceId, event.inboxId);
  const facts: KnownFact[] = [];
  for (const row of rows) {
    const fact = event.provider.driver.toPaymentFact(row);
    if (fact) facts.push({ inboxId: row.id, fact });
  }
  return facts;
}

/** Every canonical payment kind goes to the payments domain (src/domain/payments). */
export const paymentsHandler: EventHandler = {
  name: 'payments',
  kinds: paymentStatuses.map(paymentKind),
  async apply(tx, event) {
    if (!event.fact) return 'ignored';
    return applyPaymentEvent(tx, {
      provider: event.stored.provider,
      unknownPayment: event.provider.unknownPayment,
      inboxId: event.inboxId,
      fact: event.fact,
      loadOtherFacts: (lockedTx) => otherKnownFacts(lockedTx, event),
    });
  },
};
