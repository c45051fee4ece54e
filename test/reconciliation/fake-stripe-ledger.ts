import type Stripe from 'stripe';
import type { FakeGateway, RecordedRequest } from '../support/fake-gateway.ts';
import { fixtureBalanceTransaction, fixtureCharge, fixtureDispute, fixturePayout, fixtureRefund } from '../support/stripe-objects.ts';

/** What a balance transaction came from, for `expand[]=data.source`. */
export type Source =
  | { object: 'charge'; id: string; paymentIntent: string | null }
  | { object: 'refund' | 'dispute'; id: string; charge: string; paymentIntent: string | null };

export interface StripeAccount {
  transactions: Array<{ transaction: Stripe.BalanceTransaction; source: Source | null; payout?: string }>;
  payouts: Stripe.Payout[];
}

/** A balance transaction in Stripe's own fixture shape, with the fields a story sets. */
export function balanceTransaction(
  fields: Partial<Stripe.BalanceTransaction> & { id: string; amount: number; created: number },
  source: Source | null,
): StripeAccount['transactions'][number] {
  const fee = fields.fee ?? 0;
  const transaction = fixtureBalanceTransaction({
    available_on: fields.created + 2 * 86_400,
    net: fields.amount - fee,
    fee,
    source: source?.id ?? null,
    ...fields,
  });
  return { transaction, source };
}

export const payout = (fields: Partial<Stripe.Payout> & { id: string; amount: number }) => fixturePayout(fields);

/** The source object Stripe answers when expanded, from Stripe's own fixtures. */
function expanded(source: Source): unknown {
  if (source.object === 'charge') return fixtureCharge({ id: source.id, payment_intent: source.paymentIntent });
  if (source.object === 'refund') return fixtureRefund({ id: source.id, charge: source.charge, payment_intent: source.paymentIntent });
  return fixtureDispute({ id: source.id, charge: source.charge, payment_intent: source.paymentIntent });
}

export interface FakeStripeOptions {
  apiKey: string;
  /** Entries per page (Stripe may answer fewer than `limit`). */
  pageSize: number;
  /**
   * A connected account's ledger (Stripe Connect): answered only to requests whose Stripe-Account
   * names it. Absent: the platform's own, answered only to requests without the header (with one,
   * Stripe reads the connected account's balance, never the platform's).
   */
  onBehalfOf?: string;
  /** Decides per request, before the list: an answer to give instead (429, 503), or undefined. */
  interrupt?: (request: RecordedRequest) => { status: number; headers?: Record<string, string>; json?: unknown } | undefined;
}

/**
 * Stripe's `GET /v1/balance_transactions` and `GET /v1/payouts/:id`, as the API reference and
 * stripe-node's BalanceTransactionListParams describe them: newest first, `created[gte]`,
 * `created[lt]`, `payout`, `starting_after`, `has_more`, `expand[]=data.source`.
 */
export function serveStripeLedger(gateway: FakeGateway, account: StripeAccount, options: FakeStripeOptions): void {
  gateway.rules.push((request) => {
    // Another account's request: another rule's (or the gateway's 404).
    if (request.headers['stripe-account'] !== options.onBehalfOf) return undefined;
    if (request.headers.authorization !== `Bearer ${options.apiKey}`) return { status: 401, json: { error: { message: 'Invalid API Key provided' } } };
    const interrupted = options.interrupt?.(request);
    if (interrupted) return interrupted;
    const payoutMatch = /^\/v1\/payouts\/([^/]+)$/.exec(request.pathname);
    if (payoutMatch) {
      const found = account.payouts.find((p) => p.id === decodeURIComponent(payoutMatch[1]!));
      return found ? { status: 200, json: found } : { status: 404, json: { error: { type: 'invalid_request_error', message: 'No such payout' } } };
    }
    if (request.pathname !== '/v1/balance_transactions') return undefined;
    const query = new URL(request.path, 'http://x').searchParams;
    const gte = query.get('created[gte]');
    const lt = query.get('created[lt]');
    const payoutId = query.get('payout');
    const listed = account.transactions
      .filter(
        (t) =>
          (gte === null || t.transaction.created >= Number(gte)) &&
          (lt === null || t.transaction.created < Number(lt)) &&
          (payoutId === null || t.payout === payoutId),
      )
      .sort((a, b) => b.transaction.created - a.transaction.created || (a.transaction.id < b.transaction.id ? 1 : -1));
    const after = query.get('starting_after');
    const start = after === null ? 0 : listed.findIndex((t) => t.transaction.id === after) + 1;
    const page = listed.slice(start, start + options.pageSize);
    const expand = query.getAll('expand[]').includes('data.source');
    const data = page.map((t) => (expand && t.source ? { ...t.transaction, source: expanded(t.source) } : t.transaction));
    return { status: 200, json: { object: 'list', url: '/v1/balance_transactions', has_more: start + options.pageSize < listed.length, data } };
  });
}
