import { type LoadKnownFacts, type PaymentEvent, type ProviderFact, applyPaymentEvents } from '../domain/payments/apply-payment-events.ts';
import { findPaymentFacts, isCarryOverFinished } from '../domain/payments/payment-facts-sql.ts';
import type { ChargeKey } from '../domain/payments/payment-sql.ts';
import type { PaymentChange } from '../domain/payments/payment-events-sql.ts';
import type { Transaction } from '../db/client.ts';
import { PAYMENT_NOTICE_KIND, type PaymentFact, paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import { fromStoredFact, toStoredFact } from '../domain/payments/stored-fact.ts';
import type { ChargeSnapshot } from '../gateways/shared/gateway-api.ts';
import type { StoredEvent } from '../gateways/shared/webhook-driver.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';
import { type AppliedEvent, type EventHandler, type InboxEvent, type PreparedEvent, notAPaymentEvent } from './handlers.ts';
import { drizzleExecutor } from '../db/client.ts';
import { findEventsByIds, findKnownResourceEvents } from '../inbox/sql/find-events.ts';
import type { InboxRowRef } from '../inbox/sql/received-window.ts';

/**
 * The batch's charges' known facts (apply-payment-events.ts folds with them): those kept in
 * payment_facts and, until the one-time carry-over has reached them, those still only on inbox
 * rows settled before payment_facts existed (their recorded fact, or their payload read again).
 * The inbox rows are read first: a carry-over batch that commits in between has put their facts
 * in payment_facts by the time that is read, so a fact is found twice rather than not at all.
 * `charges` includes legacy keys (PaymentFact.legacyChargeId): facts stored before a gateway's key
 * changed are found under the old one.
 */
function knownFacts(batch: readonly PreparedEvent[], carryOver: CarryOverProgress): LoadKnownFacts {
  return async (tx, charges) => {
    const notCarried = (await carryOver.finished(tx)) ? [] : await factsNotCarriedYet(batch, tx, charges);
    const byInboxId = new Map<number, ProviderFact>();
    for (const fact of [...notCarried, ...(await findPaymentFacts(tx, charges))]) byInboxId.set(fact.known.inboxId, fact);
    return [...byInboxId.values()];
  };
}

/** Settled inbox rows of these charges the carry-over has not reached, as facts (their recorded one, or their payload's). */
async function factsNotCarriedYet(batch: readonly PreparedEvent[], tx: Transaction, charges: readonly ChargeKey[]): Promise<ProviderFact[]> {
  const providers = new Map(batch.map(({ event }) => [event.provider.name, event.provider]));
  const inbox = drizzleExecutor(tx);
  const rows = await findKnownResourceEvents(inbox, charges.map((c) => ({ provider: c.provider, resourceId: c.chargeId })), [], { notCarriedOnly: true });
  const facts: ProviderFact[] = [];
  const unreadable: InboxRowRef[] = [];
  const readPayload = (row: StoredEvent & { id: number }) => {
    const fact = providers.get(row.provider)?.driver.toPaymentFact(row);
    if (fact) facts.push({ provider: row.provider, known: { inboxId: row.id, fact } });
  };
  for (const row of rows) {
    const fact = fromStoredFact(row.fact);
    if (fact) facts.push({ provider: row.provider, known: { inboxId: row.id, fact } });
    else if (row.payload === null) unreadable.push({ id: row.id, receivedAt: row.receivedAt });
    else readPayload(row);
  }
  // A recorded fact this version cannot read (another handler's, an older shape): its payload after all.
  for (const row of (await findEventsByIds(inbox, unreadable)).values()) readPayload(row);
  return facts;
}

/** Whether the carry-over is done, remembered once it is (it never starts again). */
interface CarryOverProgress {
  finished(tx: Transaction): Promise<boolean>;
}

function carryOverProgress(): CarryOverProgress {
  let finished = false;
  return {
    async finished(tx) {
      finished ||= await isCarryOverFinished(tx);
      return finished;
    },
  };
}

/** A thin notification's charge (Mercado Pago): the driver knows which events are such notices. */
function noticeChargeId(event: InboxEvent): string | null {
  return event.fact ? null : (event.provider.driver.toPaymentNotice?.(event.stored) ?? null);
}

/** The charge to re-read for this event, when its kind is ordered by `refetch` (notices always are). */
function chargeToRefetch(event: InboxEvent, refetcher: ChargeRefetcher | undefined): string | undefined {
  if (!refetcher?.has(event.provider.name)) return undefined;
  if (event.fact) return event.provider.refetch.ordering[event.fact.kind] === 'refetch' ? event.fact.chargeId : undefined;
  return noticeChargeId(event) ?? undefined;
}

function snapshotFact(chargeId: string, snapshot: ChargeSnapshot, legacyChargeId: string | undefined): PaymentFact {
  return {
    kind: paymentKind(snapshot.status),
    // The id this event is keyed by, not the gateway's echo of it (Mercado Pago answers a number).
    chargeId,
    // The webhook's legacy key too: a payment stored under it before the key changed (a Stripe
    // charge id) is this payment, and the snapshot must find that row, not create a second one.
    ...(legacyChargeId === undefined ? {} : { legacyChargeId }),
    status: snapshot.status,
    occurredAt: snapshot.observedAt,
    amount: snapshot.amount,
    amountRefunded: snapshot.amountRefunded,
    currency: snapshot.currency,
    ...(snapshot.inquiryOpen === undefined ? {} : { inquiry: snapshot.inquiryOpen ? 'opened' : 'closed' }),
    snapshot: true,
  };
}

export interface PaymentsHandlerDeps {
  /** Re-reads charges for the kinds a provider orders by `refetch`. Without it, every kind is ordered by occurred_at. */
  refetcher?: ChargeRefetcher;
  /** Told each batch's payment changes (status or amounts) inside its transaction (src/delivery queues their deliveries). */
  announceChanges?(tx: Transaction, changes: readonly PaymentChange[]): Promise<void>;
}

/**
 * Every canonical payment kind (and thin notices) goes to the payments domain (src/domain/payments).
 * For a kind ordered by `refetch`, `prepare` reads the charge from the gateway API, outside any
 * transaction: the event is then a notice and the snapshot is what it means. `apply` folds each
 * event's meaning into its payment and hands that meaning back to be kept on the inbox row, from
 * where the database keeps it in payment_facts (so later folds see the snapshot again, whatever
 * becomes of the row).
 */
export function createPaymentsHandler(deps: PaymentsHandlerDeps): EventHandler {
  const carryOver = carryOverProgress();
  return {
    name: 'payments',
    kinds: [...paymentStatuses.map(paymentKind), PAYMENT_NOTICE_KIND],
    async prepare(event, signal): Promise<ChargeSnapshot | undefined> {
      const chargeId = chargeToRefetch(event, deps.refetcher);
      return chargeId === undefined ? undefined : deps.refetcher!.fetchCharge(event.provider.name, chargeId, signal);
    },
    async apply(tx, batch) {
      const applied: AppliedEvent[] = new Array(batch.length);
      const paymentEvents: PaymentEvent[] = [];
      const positions: number[] = [];
      batch.forEach(({ event, context }, position) => {
        const snapshot = context as ChargeSnapshot | undefined;
        const chargeId = event.fact?.chargeId ?? noticeChargeId(event);
        const fact = snapshot && chargeId ? snapshotFact(chargeId, snapshot, event.fact?.legacyChargeId) : event.fact;
        // A notice that could not be re-read tells nothing (no API configured for its provider).
        if (!fact) {
          applied[position] = notAPaymentEvent(event.kind);
          return;
        }
        applied[position] = { outcome: 'ignored', fact: toStoredFact(fact) };
        paymentEvents.push({
          provider: event.stored.provider,
          unknownPayment: event.provider.unknownPayment,
          inboxId: event.inboxId,
          fact,
          cause: { eventId: event.stored.eventId, eventType: event.stored.eventType },
        });
        positions.push(position);
      });
      const announce = deps.announceChanges;
      const outcomes = await applyPaymentEvents(tx, paymentEvents, knownFacts(batch, carryOver), announce && ((changes) => announce(tx, changes)));
      outcomes.forEach(({ outcome, decision }, i) => {
        Object.assign(applied[positions[i]!]!, { outcome, decision });
      });
      return applied;
    },
  };
}
