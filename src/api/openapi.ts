import { z } from 'zod';
import { paymentEventBodySchema } from '../delivery/payment-event-body.ts';
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, apiErrorSchema, feedPageSchema, paymentViewSchema, payoutViewSchema } from './api-schemas.ts';

/**
 * Components generated from the same zod schemas the routes answer with; PaymentEvent is the
 * contract itself (docs/payment-event.schema.json, less its `$schema`). OpenAPI 3.1's schema dialect
 * is JSON Schema 2020-12, so the generated schemas are used as they are.
 */
function componentSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  registry.add(paymentEventBodySchema, { id: 'PaymentEvent' });
  registry.add(feedPageSchema, { id: 'PaymentEventsPage' });
  registry.add(paymentViewSchema, { id: 'Payment' });
  registry.add(payoutViewSchema, { id: 'Payout' });
  registry.add(apiErrorSchema, { id: 'Error' });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io: 'input', uri: (id) => `#/components/schemas/${id}` });
  // A fragment-only `$id` is not allowed in 2020-12, and `$schema` is implied by the document.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $id: _id, $schema: _schema, ...schema }]) => [id, schema]));
}

const json = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });
const error = (description: string) => ({ description, content: json('Error') });
const unauthorized = error('No bearer token, not INBOX_API_TOKEN, or more than one credential (`WWW-Authenticate: Bearer`).');
const unavailable = {
  ...error('`database_unavailable`: the database cannot be reached right now; ask again after `Retry-After` seconds.'),
  headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
};
const misdirected = error("The Host is not one of the service's names (INBOX_PUBLIC_URL, INBOX_ALLOWED_HOSTS, loopback).");

/** The answers of a GET of one thing by its key. */
const lookupResponses = (found: string, ref: string, notFound: string) => ({
  200: { description: found, content: json(ref) },
  401: unauthorized,
  404: error(notFound),
  421: misdirected,
  503: unavailable,
});

let cached: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 description served at /api/v1/openapi.json. */
export function openApiDocument(): Record<string, unknown> {
  cached ??= {
    openapi: '3.1.1',
    info: {
      title: 'webhook-inbox API',
      version: '1',
      description:
        "Payment state as the inbox folded it from every gateway: a feed of payment events in a gap-free cursor order, one payment's state, history and settlement, and one payout's entries. Off unless INBOX_API_TOKEN is set.",
    },
    security: [{ bearer: [] }],
    paths: {
      '/api/v1/payment-events': {
        get: {
          operationId: 'listPaymentEvents',
          summary: 'Payment events after a cursor',
          description:
            "Every payment event exactly once across pages, each payment's in sequence order. An event appears once every transaction older than it has ended, so a long-running transaction in the database delays the feed (never skips it).",
          parameters: [
            {
              name: 'after',
              in: 'query',
              required: false,
              description:
                'A `next_cursor` from an earlier page; absent or empty: from the start. A cursor names the PostgreSQL cluster that issued it: after the inbox database is restored or moved into another cluster, an old cursor gets 409 `cursor_from_other_cluster`.',
              schema: { type: 'string' },
            },
            {
              name: 'limit',
              in: 'query',
              required: false,
              description: 'Events per page.',
              schema: { type: 'integer', minimum: 1, maximum: FEED_MAX_LIMIT, default: FEED_DEFAULT_LIMIT },
            },
            {
              name: 'account',
              in: 'query',
              required: false,
              description:
                'Only the events of payments of this gateway account (`payment.account`, e.g. a Stripe Connect `acct_…`), in the same order; keep one cursor per account read (docs/accounts.md).',
              schema: { type: 'string', minLength: 1, maxLength: 150 },
            },
          ],
          responses: {
            200: { description: 'A page; an empty one means nothing newer yet (keep the same cursor).', content: json('PaymentEventsPage') },
            400: error('`limit_invalid`, `cursor_invalid` or `account_invalid`.'),
            401: unauthorized,
            409: error(
              '`cursor_from_other_cluster`: the cursor was issued by another PostgreSQL cluster (the inbox database was restored or moved since) and points at nothing here. Read again from the start (omit `after`) and skip the events whose `id` was already applied.',
            ),
            421: misdirected,
            503: unavailable,
          },
        },
      },
      '/api/v1/payments/{provider}/{chargeId}': {
        get: {
          operationId: 'getPayment',
          summary: 'One payment: its state, events, status history and what settled (gross, fee, net, payout)',
          parameters: [
            { name: 'provider', in: 'path', required: true, description: 'The inbox provider name (e.g. `stripe`).', schema: { type: 'string' } },
            { name: 'chargeId', in: 'path', required: true, description: "The gateway's charge id.", schema: { type: 'string' } },
          ],
          responses: lookupResponses('The payment.', 'Payment', '`payment_not_found`.'),
        },
      },
      '/api/v1/payouts/{provider}/{payoutId}': {
        get: {
          operationId: 'getPayout',
          summary: 'One payout: its amount, its ledger entries and the payments they belong to',
          description: 'As `inboxctl reconcile --payout` (or the cron, after a payout webhook) last read it; Stripe only.',
          parameters: [
            { name: 'provider', in: 'path', required: true, description: 'The inbox provider name (e.g. `stripe`).', schema: { type: 'string' } },
            { name: 'payoutId', in: 'path', required: true, description: "The gateway's payout id (po_…).", schema: { type: 'string' } },
          ],
          responses: lookupResponses('The payout.', 'Payout', '`payout_not_found`: no run has read it.'),
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApiDescription',
          summary: 'This description',
          security: [],
          responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'INBOX_API_TOKEN' } },
      schemas: componentSchemas(),
    },
  };
  return cached;
}
