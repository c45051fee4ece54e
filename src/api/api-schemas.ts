import { z } from 'zod';
import { paymentStatuses } from '../domain/payments/payment-fact.ts';
import { paymentEventBodySchema } from '../delivery/payment-event-body.ts';

/**
 * The /api/v1 answers, as zod schemas: the routes build values of these types, and the OpenAPI
 * description (openapi.ts) is generated from them, so the two cannot drift apart.
 */
const status = z.enum(paymentStatuses);

export const feedPageSchema = z
  .object({
    events: z.array(paymentEventBodySchema).describe('In commit-safe order (the cursor order); each payment\'s events in sequence order.'),
    next_cursor: z.string().describe('Pass as `after` to read on. Unchanged when the page is empty: nothing newer yet.'),
  })
  .meta({ title: 'Payment events page' });

export const paymentViewSchema = z
  .object({
    payment: z.object({
      provider: z.string(),
      charge_id: z.string(),
      status,
      amount: z.int().nullable(),
      amount_refunded: z.int(),
      currency: z.string().nullable(),
      inquiry_open: z.boolean().describe('An inquiry is open: no money moved, the status is unchanged (docs/disputes.md).'),
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
  })
  .meta({ title: 'Payment' });

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

/** The feed's page size: 100 unless asked, at most 1,000 (a page is one indexed range scan). */
export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 1000;
