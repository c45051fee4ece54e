/**
 * The charge histories of test/domain/charge-scenarios.ts told in each payment gateway's own
 * words: the webhook bodies its driver maps (Stripe, Pagar.me v5 and its legacy postbacks, Asaas,
 * Zoop), or for Mercado Pago, whose webhooks are thin notices, the notices and the payment its API
 * answers with at each point. A step a gateway has no webhook for (a Pagar.me v5 dispute opening,
 * a Zoop partial refund, …) is left out of its history. Bodies only: a test stores them through
 * the gateway's own driver (`parse`), as the receiver does.
 */
import { type Scenario, type Step, referenceOutcome, stripeEvents } from '../../domain/charge-scenarios.ts';

export const historyGateways = ['stripe', 'pagarme', 'pagarme-legacy', 'asaas', 'zoop', 'mercadopago'] as const;
export type HistoryGateway = (typeof historyGateways)[number];

export interface GatewayEvent {
  /** Which step of the scenario it tells (the same index in every variant of a run). */
  step: number;
  rawBody: string;
  /** Mercado Pago signs `?data.id=` and its driver checks the body against it. */
  query?: Record<string, string>;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const decimal = (cents: number) => (cents / 100).toFixed(2);

/** Asaas writes São Paulo time (UTC-3), to the second, without a zone. */
const saoPaulo = (seconds: number) => new Date((seconds - 3 * 3600) * 1000).toISOString().slice(0, 19).replace('T', ' ');

type Render = (step: Step, index: number, scenario: Scenario, key: string, at: number) => string | undefined;

const pagarme: Render = (step, index, scenario, key, at) => {
  const charge = (status: string, extra: Record<string, unknown> = {}) => ({ id: key, amount: scenario.amount, currency: 'BRL', status, ...extra });
  const body = (type: string, data: Record<string, unknown>) => JSON.stringify({ id: `hook_${key}_${index}`, type, created_at: iso(at), data });
  const refund = step.amountRefunded ?? 0;
  switch (step.kind) {
    case 'pending':
      return body('charge.pending', charge('pending'));
    case 'authorized':
      return body('charge.pending', charge('pending', { last_transaction: { status: 'authorized_pending_capture' } }));
    case 'succeeded':
    case 'captured':
      return body('charge.paid', charge('paid', { paid_amount: scenario.amount, paid_at: iso(at) }));
    case 'failed':
      return body('charge.payment_failed', charge('failed'));
    case 'void':
    case 'expired':
      return body('charge.refunded', charge('canceled', { last_transaction: { status: 'voided' } }));
    case 'refund':
      return refund >= scenario.amount
        ? body('charge.refunded', charge('canceled', { canceled_amount: refund, last_transaction: { status: 'refunded' } }))
        : body('charge.partial_canceled', charge('paid', { canceled_amount: refund, last_transaction: { status: 'partial_refunded' } }));
    case 'dispute_lost':
      return body('charge.chargedback', charge('chargedback'));
    default:
      return undefined;
  }
};

const legacyStatus: Partial<Record<Step['kind'], [old: string, current: string]>> = {
  pending: ['processing', 'waiting_payment'],
  authorized: ['processing', 'authorized'],
  succeeded: ['processing', 'paid'],
  captured: ['authorized', 'paid'],
  failed: ['processing', 'refused'],
  void: ['authorized', 'refunded'],
  expired: ['authorized', 'refunded'],
  refund: ['paid', 'refunded'],
  dispute_lost: ['paid', 'chargedback'],
};

const pagarmeLegacy: Render = (step, _index, scenario, key, at) => {
  const statuses = legacyStatus[step.kind];
  if (!statuses) return undefined;
  return new URLSearchParams({
    id: key,
    event: 'transaction_status_changed',
    old_status: statuses[0],
    desired_status: statuses[1],
    current_status: statuses[1],
    object: 'transaction',
    'transaction[status]': statuses[1],
    'transaction[amount]': String(scenario.amount),
    'transaction[refunded_amount]': String(step.kind === 'refund' ? step.amountRefunded : 0),
    'transaction[date_updated]': iso(at),
  }).toString();
};

const asaasEvent: Partial<Record<Step['kind'], string>> = {
  pending: 'PAYMENT_CREATED',
  authorized: 'PAYMENT_AUTHORIZED',
  succeeded: 'PAYMENT_CONFIRMED',
  captured: 'PAYMENT_RECEIVED',
  failed: 'PAYMENT_REPROVED_BY_RISK_ANALYSIS',
  void: 'PAYMENT_REFUNDED',
  expired: 'PAYMENT_DELETED',
  dispute_created: 'PAYMENT_CHARGEBACK_REQUESTED',
  dispute_won: 'PAYMENT_AWAITING_CHARGEBACK_REVERSAL',
};

const asaas: Render = (step, index, scenario, key, at) => {
  const full = step.kind === 'refund' && step.amountRefunded! >= scenario.amount;
  const event = step.kind === 'refund' ? (full ? 'PAYMENT_REFUNDED' : 'PAYMENT_PARTIALLY_REFUNDED') : asaasEvent[step.kind];
  if (!event) return undefined;
  const captured = step.kind !== 'void' && step.kind !== 'authorized' && step.kind !== 'pending';
  // The refunds so far, as one: only their sum is read.
  const refunds = step.kind === 'refund' ? [{ value: Number(decimal(step.amountRefunded!)), status: 'DONE' }] : undefined;
  const day = saoPaulo(at).slice(0, 10);
  const payment = {
    object: 'payment',
    id: key,
    value: Number(decimal(scenario.amount)),
    billingType: 'CREDIT_CARD',
    status: event.replace('PAYMENT_', ''),
    confirmedDate: captured ? day : null,
    paymentDate: captured ? day : null,
    ...(refunds ? { refunds } : {}),
  };
  return JSON.stringify({ id: `evt_${key}_${index}&${index}`, event, dateCreated: saoPaulo(at), payment });
};

const zoopEvent: Partial<Record<Step['kind'], string>> = {
  pending: 'transaction.pending',
  authorized: 'transaction.pre_authorized',
  succeeded: 'transaction.succeeded',
  captured: 'transaction.capture.succeeded',
  failed: 'transaction.failed',
  void: 'transaction.void.succeeded',
  expired: 'transaction.canceled',
  dispute_created: 'transaction.disputed',
  dispute_lost: 'transaction.charged_back',
};

const zoop: Render = (step, index, scenario, key, at) => {
  // Zoop refunds the whole transaction; a partial refund has no event of its own.
  const type = step.kind === 'refund' ? (step.amountRefunded! >= scenario.amount ? 'transaction.refunded' : undefined) : zoopEvent[step.kind];
  if (!type) return undefined;
  const captured = step.kind !== 'authorized' && step.kind !== 'void' && step.kind !== 'expired' && step.kind !== 'pending' && step.kind !== 'failed';
  const object = { id: key, resource: 'transaction', status: type.split('.').at(-1), amount: decimal(scenario.amount), currency: 'BRL', captured };
  return JSON.stringify({ id: `${key}_${index}`, type, resource: 'event', created_at: iso(at), payload: { object } });
};

/** The gateway's events for the scenario, keyed by `key`, the first step at `baseSeconds`. */
export function gatewayEvents(gateway: HistoryGateway, scenario: Scenario, key: string, baseSeconds: number): GatewayEvent[] {
  if (gateway === 'stripe') return stripeEvents(scenario, key, baseSeconds).map((event, step) => ({ step, rawBody: event.body }));
  if (gateway === 'mercadopago') {
    return scenario.steps.map((step, index) => ({
      step: index,
      rawBody: JSON.stringify({
        action: 'payment.updated',
        api_version: 'v1',
        data: { id: key },
        date_created: iso(baseSeconds + step.atSecond),
        id: `${key}_${index}`,
        live_mode: false,
        type: 'payment',
        user_id: 1,
      }),
      query: { 'data.id': key, type: 'payment' },
    }));
  }
  const render = { pagarme, 'pagarme-legacy': pagarmeLegacy, asaas, zoop }[gateway];
  return scenario.steps.flatMap((step, index) => {
    const rawBody = render(step, index, scenario, key, baseSeconds + step.atSecond);
    return rawBody === undefined ? [] : [{ step: index, rawBody }];
  });
}

const mercadoPagoStatus: Record<string, string> = {
  pending: 'pending',
  authorized: 'authorized',
  paid: 'approved',
  partially_refunded: 'approved',
  refunded: 'refunded',
  disputed: 'in_mediation',
  charged_back: 'charged_back',
  failed: 'rejected',
  canceled: 'cancelled',
};

/** What Mercado Pago's API answers for the payment once the steps up to `lastStep` have happened. */
export function mercadoPagoPayment(scenario: Scenario, key: string, lastStep: number): unknown {
  const state = referenceOutcome({ ...scenario, steps: scenario.steps.slice(0, lastStep + 1) });
  return {
    id: key,
    status: mercadoPagoStatus[state.status],
    // A chargeback whose money the acquirer kept.
    status_detail: state.status === 'charged_back' ? 'settled' : 'accredited',
    transaction_amount: Number(decimal(scenario.amount)),
    transaction_amount_refunded: Number(decimal(state.amountRefunded)),
    currency_id: 'BRL',
  };
}
