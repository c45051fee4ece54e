import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { PaymentEventRow } from '../../../src/domain/payments/schema.ts';
import type { OutgoingEvent } from '../../../src/delivery/event-transport.ts';
import { toPaymentEventBody } from '../../../src/delivery/payment-event-body.ts';

/** An outbox row as processing writes one: the first event of a paid charge unless told otherwise. */
export function paymentEventRow(overrides: Partial<PaymentEventRow> = {}): PaymentEventRow {
  return {
    id: randomUUID(),
    position: 1,
    txid: '1',
    paymentId: 1,
    sequence: 1,
    provider: 'stripe',
    gatewayChargeId: 'ch_transport_1',
    account: null,
    status: 'paid',
    previousStatus: null,
    amount: 2000,
    amountRefunded: 0,
    inquiryOpen: false,
    split: null,
    currency: 'BRL',
    occurredAt: new Date('2026-01-02T03:04:05Z'),
    causeInboxId: 1,
    causeEventId: 'evt_1',
    causeEventType: 'charge.succeeded',
    createdAt: new Date(),
    ...overrides,
  };
}

/**
 * The event as a transport gets it, signed by the official `standardwebhooks` package (an
 * independent signer: the transport under test only carries the headers).
 */
export function signedOutgoing(row: PaymentEventRow, secret: string, timeoutMs = 5_000): OutgoingEvent {
  const body = JSON.stringify(toPaymentEventBody(row));
  const now = new Date();
  const signature = new Webhook(secret).sign(row.id, now, body);
  return {
    event: row,
    body,
    headers: { 'webhook-id': row.id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature },
    timeoutMs,
  };
}
