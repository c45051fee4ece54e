import type postgres from 'postgres';
import { waitFor } from '../support/wait.ts';
import type { ScenarioEvent } from '../domain/charge-scenarios.ts';

export const SECRET = 'whsec_processing_test_secret';

export interface InboxState {
  id: number;
  eventId: string;
  status: string;
  attempts: number;
  lastError: string | null;
}

export async function inboxRows(sql: postgres.Sql, eventIds: readonly string[], provider = 'stripe'): Promise<InboxState[]> {
  const rows = await sql`
    select id, event_id, status, attempts, last_error from webhook_inbox
    where provider = ${provider} and event_id = any(${[...eventIds]}::text[]) order by id`;
  return rows.map((r) => ({ id: Number(r.id), eventId: r.event_id, status: r.status, attempts: r.attempts, lastError: r.last_error }));
}

/** Every listed event stored and no longer pending. */
export async function waitUntilSettled(sql: postgres.Sql, eventIds: readonly string[], timeoutMs = 20_000, provider = 'stripe'): Promise<InboxState[]> {
  const unique = [...new Set(eventIds)];
  return waitFor(
    async () => {
      const rows = await inboxRows(sql, unique, provider);
      return rows.length === unique.length && rows.every((r) => r.status !== 'pending') ? rows : undefined;
    },
    { message: `${unique.length} events to leave pending`, timeoutMs },
  );
}

export interface PaymentState {
  id: number;
  status: string;
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  lastGatewayEventAt: Date | null;
  inquiryOpen: boolean;
}

export async function paymentOf(sql: postgres.Sql, chargeId: string, provider = 'stripe'): Promise<PaymentState | undefined> {
  const [row] = await sql`
    select id, status, amount, amount_refunded, currency, last_gateway_event_at, inquiry_open from payments
    where provider = ${provider} and gateway_charge_id = ${chargeId}`;
  if (!row) return undefined;
  return {
    id: Number(row.id),
    status: row.status,
    amount: row.amount === null ? null : Number(row.amount),
    amountRefunded: Number(row.amount_refunded),
    currency: row.currency,
    lastGatewayEventAt: row.last_gateway_event_at,
    inquiryOpen: row.inquiry_open,
  };
}

export interface Transition {
  inboxId: number;
  from: string | null;
  to: string;
}

export async function transitionsOf(sql: postgres.Sql, chargeId: string, provider = 'stripe'): Promise<Transition[]> {
  const rows = await sql`
    select t.inbox_id, t.from_status, t.to_status from payment_transitions t join payments p on p.id = t.payment_id
    where p.provider = ${provider} and p.gateway_charge_id = ${chargeId} order by t.id`;
  return rows.map((r) => ({ inboxId: Number(r.inbox_id), from: r.from_status, to: r.to_status }));
}

export interface OutboundEvent {
  sequence: number;
  status: string;
  previousStatus: string | null;
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  inquiryOpen: boolean;
  causeInboxId: number;
  causeEventId: string;
}

/** A payment's outbox rows (payment_events), in sequence order. */
export async function outboundEventsOf(sql: postgres.Sql, chargeId: string, provider = 'stripe'): Promise<OutboundEvent[]> {
  const rows = await sql`
    select e.sequence, e.status, e.previous_status, e.amount, e.amount_refunded, e.currency, e.inquiry_open, e.cause_inbox_id, e.cause_event_id
    from payment_events e join payments p on p.id = e.payment_id
    where p.provider = ${provider} and p.gateway_charge_id = ${chargeId} order by e.sequence`;
  return rows.map((r) => ({
    sequence: r.sequence,
    status: r.status,
    previousStatus: r.previous_status,
    amount: r.amount === null ? null : Number(r.amount),
    amountRefunded: Number(r.amount_refunded),
    currency: r.currency,
    inquiryOpen: r.inquiry_open,
    causeInboxId: Number(r.cause_inbox_id),
    causeEventId: r.cause_event_id,
  }));
}

/**
 * The outbox tells the payment's history exactly: numbered 1..n without a gap; one event per
 * transition (the status before it, the inbox event that caused it), and between them one per
 * move of the amounts or of the inquiry alone (the status unchanged); no event repeats the one
 * before; the last is the payment as its row has it.
 */
export function outboxMatchesHistory(events: readonly OutboundEvent[], transitions: readonly Transition[], payment: PaymentState | undefined): boolean {
  const statusChanges = events.filter((e) => e.previousStatus !== e.status);
  const payload = (e: Pick<OutboundEvent, 'status' | 'amount' | 'amountRefunded' | 'currency' | 'inquiryOpen'>) =>
    JSON.stringify([e.status, e.amount, e.amountRefunded, e.currency, e.inquiryOpen]);
  const last = events.at(-1);
  return (
    events.every((e, i) => e.sequence === i + 1 && e.previousStatus === (i === 0 ? null : events[i - 1]!.status)) &&
    events.every((e, i) => i === 0 || payload(e) !== payload(events[i - 1]!)) &&
    statusChanges.length === transitions.length &&
    statusChanges.every((e, i) => e.status === transitions[i]!.to && e.previousStatus === transitions[i]!.from && e.causeInboxId === transitions[i]!.inboxId) &&
    last !== undefined &&
    payment !== undefined &&
    payload(last) === payload(payment)
  );
}

/** Transitions that follow on from each other and end where the payment is: no lost update. */
export function isChain(transitions: readonly Transition[], finalStatus: string): boolean {
  return (
    transitions.length > 0 &&
    transitions[0]!.from === null &&
    transitions.every((t, i) => i === 0 || t.from === transitions[i - 1]!.to) &&
    transitions.at(-1)!.to === finalStatus
  );
}

/** Stores an event the way the receiver does, without a job (tests that bypass HTTP add jobs themselves). */
export async function storeEvent(sql: postgres.Sql, event: ScenarioEvent, provider = 'stripe'): Promise<number> {
  // The key first, as the receiver does: only a new key stores a row.
  const [inserted] = await sql`
    with new_key as (
      insert into webhook_event_keys (provider, event_id) values (${provider}, ${event.eventId})
      on conflict do nothing returning provider)
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at)
    select ${provider}, ${event.eventId}, ${event.type}, ${event.chargeId}, ${sql.json(JSON.parse(event.body))},
           ${Buffer.from(event.body)}, ${new Date(event.created * 1000)}
    from new_key
    returning id`;
  if (inserted) return Number(inserted.id);
  const [existing] = await sql`select id from webhook_inbox where provider = ${provider} and event_id = ${event.eventId}`;
  return Number(existing!.id);
}
