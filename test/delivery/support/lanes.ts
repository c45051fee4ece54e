import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import type { Consumer } from './consumer.ts';

/** A Standard Webhooks secret as an operator makes one: whsec_ and 32 random bytes in base64. */
export function newDestinationSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface PaymentRow {
  id: number;
  chargeId: string;
  status: string;
  eventSequence: number;
}

export async function paymentsOf(sql: postgres.Sql, chargeIds: readonly string[], provider = 'stripe'): Promise<PaymentRow[]> {
  const rows = await sql`
    select id, gateway_charge_id, status, event_sequence from payments
    where provider = ${provider} and gateway_charge_id = any(${[...chargeIds]}::text[])`;
  return rows.map((r) => ({ id: Number(r.id), chargeId: r.gateway_charge_id, status: r.status, eventSequence: r.event_sequence }));
}

/** The outbox ids of one payment, by sequence: what the webhook-ids must be. */
export async function eventIdsOf(sql: postgres.Sql, paymentId: number): Promise<string[]> {
  const rows = await sql`select id from payment_events where payment_id = ${paymentId} order by sequence`;
  return rows.map((r) => r.id as string);
}

export interface LaneRow {
  paymentId: number;
  deliveredSequence: number;
  attempts: number;
  parked: boolean;
  lastError: string | null;
}

export async function laneOf(sql: postgres.Sql, destination: string, paymentId: number): Promise<LaneRow | undefined> {
  const [row] = await sql`
    select payment_id, delivered_sequence, attempts, parked_at is not null as parked, last_error from delivery_lanes
    where destination = ${destination} and payment_id = ${paymentId}`;
  return (
    row && {
      paymentId: Number(row.payment_id),
      deliveredSequence: row.delivered_sequence,
      attempts: row.attempts,
      parked: row.parked,
      lastError: row.last_error,
    }
  );
}

/** Every listed payment's events all accepted by the consumer: its last accepted sequence is the payment's last. */
export function allDelivered(consumer: Consumer, payments: readonly PaymentRow[]): boolean {
  return payments.every((p) => p.eventSequence > 0 && consumer.acceptedFor(p.chargeId).some((e) => e.sequence === p.eventSequence));
}
