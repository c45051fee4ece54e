import { z } from 'zod';
import type { PaymentEventRow } from '../domain/payments/schema.ts';
import { type SplitShare, paymentStatuses } from '../domain/payments/payment-fact.ts';

/**
 * The contract with the application: what one change of a payment (its status, its amounts, or an
 * inquiry opened or closed)
 * looks like on the wire, whether it is pushed to a destination (signed, Standard Webhooks) or read
 * from the feed (GET /api/v1/payment-events). One zod schema is the single source: the type below is inferred
 * from it, docs/payment-event.schema.json is generated from it (test/api/payment-event-schema.test.ts
 * fails when the committed file differs), and the OpenAPI description embeds the same JSON Schema.
 * Changing a field here is changing the contract: add fields, never rename or remove one.
 */
const status = z.enum(paymentStatuses).describe('The canonical payment status, the same for every gateway.');
const minorUnits = z
  .int()
  .min(0)
  .describe(
    "In `currency`'s minor units, by its ISO 4217 exponent, whatever the gateway sent (docs/amounts.md): 1050 is 10.50 BRL, 1500 is 1500 CLP or JPY (exponent 0), 12345 is 12.345 KWD or BHD (exponent 3).",
  );

/** One recipient's share of a split charge, in Pagar.me's words (docs/accounts.md). Shared with the payment lookup. */
export const splitShareSchema = z
  .object({
    recipient_id: z.string().min(1).describe('The recipient at the gateway (Pagar.me `rp_…`; `re_…` before v5).'),
    rule_id: z.string().min(1).nullable().describe("The split rule's id at the gateway (`sr_…`); null when it gave none."),
    amount: minorUnits.nullable().describe("A flat share, in `currency`'s minor units; null for a percentage."),
    percentage: z.number().min(0).max(100).nullable().describe('A share in percent of the charge; null for a flat amount.'),
    liable: z.boolean().nullable().describe('The recipient answers for chargebacks (`liable`); null when the gateway did not say.'),
    charge_processing_fee: z
      .boolean()
      .nullable()
      .describe('The recipient pays the processing fee (`charge_processing_fee`); null when the gateway did not say.'),
    charge_remainder_fee: z
      .boolean()
      .nullable()
      .describe(
        'The recipient receives what is left after the division (`charge_remainder_fee`; `charge_remainder` before v5); null when the gateway did not say.',
      ),
  })
  .describe("One recipient's share of the charge.");

export type SplitShareBody = z.infer<typeof splitShareSchema>;

export function toSplitShareBody(share: SplitShare): SplitShareBody {
  return {
    recipient_id: share.recipientId,
    rule_id: share.ruleId,
    amount: share.amount,
    percentage: share.percentage,
    liable: share.liable,
    charge_processing_fee: share.chargeProcessingFee,
    charge_remainder_fee: share.chargeRemainderFee,
  };
}

export const paymentEventBodySchema = z
  .object({
    id: z.uuid().describe('Stable id of this event: the same on every resend and in the feed (the Standard Webhooks `webhook-id`). Deduplicate on it.'),
    type: z
      .enum(paymentStatuses.map((s) => `payment.${s}` as const))
      .describe(
        "`payment.<status>`: the payment's status after this change. The same type follows itself when only the amounts or the inquiry moved (a second partial refund is a second `payment.partially_refunded`, with the new `amount_refunded`; an inquiry opened on a paid payment is a `payment.paid` with `previous_status` `paid` and `inquiry_open` true): a new change has a new `id` and the next `sequence`, a resend the same ones.",
      ),
    sequence: z
      .int()
      .min(1)
      .describe("This payment's events are numbered 1, 2, 3, … without gaps: apply event n only after n − 1, ignore one at or below the last applied."),
    follows_sequence: z
      .int()
      .min(0)
      .optional()
      .describe(
        'Pushed events only: the last event of this payment this destination answered 2xx before this one (0: none). It is `sequence − 1` unless events in between were not sent to this destination: skipped by an operator (`inboxctl lanes skip`), left out by its `kinds` filter, or written before the destination started. Apply this event when the last sequence you applied is at least `follows_sequence` (and below `sequence`); the feed, which never leaves one out, omits it (read it as `sequence − 1`).',
      ),
    occurred_at: z.iso.datetime().describe('When the gateway says the change happened (its event time), RFC 3339 in UTC.'),
    payment: z
      .object({
        provider: z.string().min(1).describe('The inbox provider name the gateway events came through (e.g. `stripe`, `pagarme-br`).'),
        charge_id: z
          .string()
          .min(1)
          .describe(
            "The gateway's id of the payment; with `provider`, the payment's key. The charge's id; for Stripe the PaymentIntent's (`pi_…`) when the charge has one, else the charge's (`ch_…`), and `ch_…` for payments first stored under their charge before PaymentIntents were read.",
          ),
        account: z
          .string()
          .min(1)
          .nullable()
          .describe(
            'The gateway account the payment belongs to when one provider receives for many (a Stripe Connect connected account, `acct_…`); null for a direct integration, and on events written before accounts were recorded. An attribute, not part of the key: `provider` and `charge_id` still name the payment (docs/accounts.md).',
          ),
        status,
        previous_status: status
          .nullable()
          .describe("The status before this change: the same as `status` when only the amounts moved; null on the payment's first event."),
        amount: minorUnits.nullable().describe("The charged amount in `currency`'s minor units; null while no gateway event has said it."),
        amount_refunded: minorUnits.describe("The amount refunded so far, in `currency`'s minor units."),
        currency: z.string().min(1).max(3).nullable().describe('ISO 4217 code in upper case (e.g. `BRL`); null while no gateway event has said it.'),
        inquiry_open: z
          .boolean()
          .describe(
            "An inquiry is open: the payer's bank asked about the payment before any dispute (Stripe's `warning_*` disputes). No money moved and the status is unchanged; it closes when the gateway closes the inquiry, or when it becomes a dispute (status `disputed`) or a chargeback. Added to the contract after its first version: an event stored before says false.",
          ),
        split: z
          .array(splitShareSchema)
          .min(1)
          .optional()
          .describe(
            "How the charge is divided between recipients (Pagar.me split rules), as the gateway last said it when the charge was created, authorized or paid. Present only on a split charge's events; a change of the split alone is an event of its own (same status). Added to the contract after its first version.",
          ),
      })
      .describe('The payment right after this change.'),
    cause: z
      .object({
        inbox_id: z.int().min(1).describe('The inbox row of the gateway event that caused the change (inboxctl show <inbox_id>).'),
        event_id: z.string().min(1).describe("The gateway's own event id."),
        event_type: z.string().min(1).describe("The gateway's own event type (e.g. `charge.refunded`)."),
      })
      .describe('The gateway event that caused the change.'),
  })
  .meta({
    title: 'Payment event',
    description:
      'One change of one payment, as the webhook inbox tells the application: its status, or its amounts (amount, amount_refunded, currency) or its open inquiry (inquiry_open) with the status unchanged.',
  });

export type PaymentEventBody = z.infer<typeof paymentEventBodySchema>;

/** The outbox row as the application sees it. Pure: the row already holds the state at that change. */
export function toPaymentEventBody(row: PaymentEventRow): PaymentEventBody {
  return {
    id: row.id,
    type: `payment.${row.status}`,
    sequence: row.sequence,
    occurred_at: row.occurredAt.toISOString(),
    payment: {
      provider: row.provider,
      charge_id: row.gatewayChargeId,
      account: row.account,
      status: row.status,
      previous_status: row.previousStatus,
      amount: row.amount,
      amount_refunded: row.amountRefunded,
      currency: row.currency,
      inquiry_open: row.inquiryOpen,
      ...(row.split === null ? {} : { split: row.split.map(toSplitShareBody) }),
    },
    cause: { inbox_id: row.causeInboxId, event_id: row.causeEventId, event_type: row.causeEventType },
  };
}

/**
 * The body pushed to one destination: the event, and what it follows there. Built field by field so
 * `follows_sequence` sits beside `sequence` on the wire, as a reader looks for it.
 */
export function toPushedEventBody(row: PaymentEventRow, followsSequence: number): PaymentEventBody {
  const { id, type, sequence, ...rest } = toPaymentEventBody(row);
  return { id, type, sequence, follows_sequence: followsSequence, ...rest };
}

/**
 * The JSON Schema (draft 2020-12) of the body, as committed in docs/payment-event.schema.json.
 * Read as an input schema: it names no `additionalProperties`, so a consumer that validates with it
 * keeps working when the contract gains a field (the test checks the inbox sends no field it omits).
 */
export function paymentEventJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(paymentEventBodySchema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
}
