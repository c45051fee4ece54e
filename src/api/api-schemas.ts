import { z } from 'zod';
import { paymentStatuses } from '../domain/payments/payment-fact.ts';
import { paymentEventBodySchema, splitShareSchema } from '../delivery/payment-event-body.ts';

/**
 * The /api/v1 answers, as zod schemas: the routes build values of these types, and the OpenAPI
 * description (openapi.ts) is generated from them, so the two cannot drift apart.
 */
const status = z.enum(paymentStatuses);

export const feedPageSchema = z
  .object({
    events: z.array(paymentEventBodySchema).describe("In commit-safe order (the cursor order); each payment's events in sequence order."),
    next_cursor: z.string().describe('Pass as `after` to read on. Unchanged when the page is empty: nothing newer yet.'),
  })
  .meta({ title: 'Payment events page' });

const settlementSchema = z
  .object({
    gross: z.int().describe('What the ledger credited for this payment (minor units).'),
    fee: z.int().describe('Fees charged on it, on its entries and on fee lines of their own.'),
    net: z.int().describe('What it left in the balance after fees, refunds and chargebacks.'),
    refunded: z.int().describe('Refunded in the ledger.'),
    charged_back: z.int().describe('Taken by chargebacks in the ledger, less those reversed.'),
    currency: z.string().nullable().describe('As the gateway wrote it (Stripe: the balance currency, lower case).'),
    available_at: z.iso.datetime().nullable().describe('When the credit is (or was) available.'),
    payout_ids: z.array(z.string()).describe('Payouts that paid it out, when known.'),
    entry_ids: z.array(z.string()).describe('Its ledger entries.'),
  })
  .describe('What the gateway settled for this payment, from its ledger as `inboxctl reconcile` last read it; null when no entry of it has been read.');

export const paymentViewSchema = z
  .object({
    payment: z.object({
      provider: z.string(),
      charge_id: z.string(),
      account: z
        .string()
        .nullable()
        .describe('The gateway account it belongs to (a Stripe Connect `acct_…`); null for a direct integration (docs/accounts.md).'),
      status,
      amount: z.int().nullable(),
      amount_refunded: z.int(),
      currency: z.string().nullable(),
      inquiry_open: z.boolean().describe('An inquiry is open: no money moved, the status is unchanged (docs/disputes.md).'),
      split: z
        .array(splitShareSchema)
        .nullable()
        .describe('How the charge is divided between recipients (Pagar.me split rules, docs/accounts.md); null when no gateway event said one.'),
      last_gateway_event_at: z.iso.datetime().nullable().describe('The newest gateway event time folded into this state.'),
      event_sequence: z.int().min(0).describe('The sequence number of its last event (0: none yet).'),
      created_at: z.iso.datetime(),
      updated_at: z.iso.datetime(),
    }),
    events: z.array(paymentEventBodySchema).describe('Every event of this payment, in sequence order: the same bodies as the feed and the push.'),
    transitions: z
      .array(
        z.object({
          from_status: status.nullable(),
          to_status: status,
          inbox_id: z.int().describe('The inbox event that caused it.'),
          recorded_at: z.iso.datetime(),
        }),
      )
      .describe('The status history as recorded, oldest first. A change of the amounts alone (a further partial refund) is an event, not a transition.'),
    settlement: settlementSchema.nullable(),
  })
  .meta({ title: 'Payment' });

const entrySchema = z.object({
  entry_id: z.string(),
  kind: z.enum(['charge', 'refund', 'chargeback', 'chargeback_reversal', 'fee', 'payout', 'other']),
  gateway_type: z.string().describe("The gateway's own word for it (`charge`, `PAYMENT_RECEIVED`, `credit`)."),
  amount: z.int(),
  fee: z.int(),
  net: z.int(),
  currency: z.string(),
  charge_id: z.string().nullable(),
  payment: z
    .object({ charge_id: z.string(), status, amount: z.int().nullable(), currency: z.string().nullable() })
    .nullable()
    .describe('The payment it belongs to, when the inbox has it.'),
});

export const payoutViewSchema = z
  .object({
    payout: z.object({
      provider: z.string(),
      payout_id: z.string(),
      amount: z.int().describe('What reached (or is to reach) the bank, minor units.'),
      currency: z.string(),
      status: z.string(),
      arrival_at: z.iso.datetime().nullable(),
      entries_read_at: z.iso.datetime().nullable().describe('When every entry of it was read; null: not yet, the entries below may be incomplete.'),
    }),
    entries: z.array(entrySchema).describe("Its ledger entries, oldest first, without the payout's own."),
    totals: z.object({ gross: z.int(), fee: z.int(), net: z.int() }).describe('Of the entries; `net` equals the payout amount when it adds up.'),
  })
  .meta({ title: 'Payout' });

export const apiErrorSchema = z
  .object({
    error: z.object({
      code: z.string().describe('Stable, snake_case: what to branch on.'),
      message: z.string().describe('For people; may change.'),
    }),
  })
  .meta({ title: 'Error' });

export type FeedPage = z.input<typeof feedPageSchema>;
export type PaymentView = z.input<typeof paymentViewSchema>;
export type PayoutView = z.input<typeof payoutViewSchema>;

/** The feed's page size: 100 unless asked, at most 1,000 (a page is one indexed range scan). */
export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 1000;
