import { type Transaction, drizzleExecutor } from '../db/client.ts';
import type { ProviderFact } from '../domain/payments/fold-charges.ts';
import { findPaymentFacts, isCarryOverFinished } from '../domain/payments/sql/payment-facts.ts';
import type { ChargeKey } from '../domain/payments/sql/payments.ts';
import { fromStoredFact } from '../domain/payments/stored-fact.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import type { StoredEvent } from '../gateways/shared/webhook-driver.ts';
import { findEventsByIds, findKnownResourceEvents } from '../inbox/sql/find-events.ts';
import type { InboxRowRef } from '../inbox/sql/received-window.ts';

/** Whether the one-time carry-over is done, remembered once it is (it never starts again). */
export interface CarryOverProgress {
  finished(tx: Transaction): Promise<boolean>;
}

export function carryOverProgress(): CarryOverProgress {
  let finished = false;
  return {
    async finished(tx) {
      finished ||= await isCarryOverFinished(tx);
      return finished;
    },
  };
}

/**
 * Every fact known for these payment keys (legacy keys included: facts stored before a gateway's
 * key changed are found under the old one): those kept in payment_facts and, until the one-time
 * carry-over has reached them, those still only on inbox rows settled before payment_facts
 * existed (their recorded fact, or their payload read again through `providers`' drivers). The
 * inbox rows are read first: a carry-over batch that commits in between has put their facts in
 * payment_facts by the time that is read, so a fact is found twice rather than not at all; it is
 * kept once.
 */
export async function loadKnownFacts(
  tx: Transaction,
  keys: readonly ChargeKey[],
  providers: ReadonlyMap<string, ConfiguredProvider>,
  carryOver: CarryOverProgress,
): Promise<ProviderFact[]> {
  const notCarried = (await carryOver.finished(tx)) ? [] : await factsNotCarriedYet(tx, keys, providers);
  const byInboxId = new Map<number, ProviderFact>();
  for (const fact of [...notCarried, ...(await findPaymentFacts(tx, keys))]) byInboxId.set(fact.known.inboxId, fact);
  return [...byInboxId.values()];
}

/** Settled inbox rows of these charges the carry-over has not reached, as facts (their recorded one, or their payload's). */
async function factsNotCarriedYet(tx: Transaction, keys: readonly ChargeKey[], providers: ReadonlyMap<string, ConfiguredProvider>): Promise<ProviderFact[]> {
  const inbox = drizzleExecutor(tx);
  const rows = await findKnownResourceEvents(
    inbox,
    keys.map((c) => ({ provider: c.provider, resourceId: c.chargeId })),
    [],
    { notCarriedOnly: true },
  );
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
