import type { PaymentFact } from './payment-fact.ts';
import { type ChargeKey, chargeKeyOf } from './sql/payments.ts';

export type UnknownPaymentMode = 'create' | 'require';

/** One event of a batch as the payments domain folds it: its provider's mode and its fact. */
export interface PaymentEvent {
  provider: string;
  unknownPayment: UnknownPaymentMode;
  inboxId: number;
  /** The gateway account the event belongs to (webhook_inbox.account); null for a direct integration. */
  account: string | null;
  fact: PaymentFact;
  /** The gateway event it came from, named in the outbound event it may cause (payment_events). */
  cause: { eventId: string; eventType: string };
}

/** The batch's events of one charge, in batch order. */
export interface ChargeGroup {
  key: ChargeKey;
  /** The account its events name (the first that names one): a payment created by them belongs to it. */
  account: string | null;
  /** Keys the payment may still be stored under (the events' legacyChargeId), each once. */
  legacyKeys: ChargeKey[];
  events: { index: number; event: PaymentEvent }[];
}

/**
 * A batch's events grouped by charge (by chargeKeyOf), and every key a charge's payment or facts
 * may be stored under mapped to the charge it belongs to: its own key, and each legacy key no
 * other charge of the batch owns.
 */
export interface ChargeGroups {
  /** The events, and their index in the batch, of every charge. */
  byCharge: Map<string, ChargeGroup>;
  owners: Map<string, { owner: string; key: ChargeKey }>;
}

export function groupByCharge(events: readonly PaymentEvent[]): ChargeGroups {
  const byCharge = new Map<string, ChargeGroup>();
  events.forEach((event, index) => {
    const key = { provider: event.provider, chargeId: event.fact.chargeId };
    const id = chargeKeyOf(key);
    const group = byCharge.get(id) ?? { key, account: null, legacyKeys: [], events: [] };
    group.account ??= event.account;
    const legacy = event.fact.legacyChargeId;
    if (legacy !== undefined && !group.legacyKeys.some((k) => k.chargeId === legacy)) group.legacyKeys.push({ provider: event.provider, chargeId: legacy });
    group.events.push({ index, event });
    byCharge.set(id, group);
  });
  return { byCharge, owners: keyOwners(byCharge) };
}

function keyOwners(byCharge: Map<string, ChargeGroup>): Map<string, { owner: string; key: ChargeKey }> {
  const owners = new Map<string, { owner: string; key: ChargeKey }>();
  for (const [id, group] of byCharge) owners.set(id, { owner: id, key: group.key });
  for (const [id, group] of byCharge) {
    for (const key of group.legacyKeys) if (!owners.has(chargeKeyOf(key))) owners.set(chargeKeyOf(key), { owner: id, key });
  }
  return owners;
}

/** Every key the batch's payments and facts are looked up under (legacy keys included). */
export function keysOf(charges: ChargeGroups): ChargeKey[] {
  return [...charges.owners.values()].map(({ key }) => key);
}
