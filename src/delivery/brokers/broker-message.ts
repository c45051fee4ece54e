import type { PaymentEventRow } from '../../domain/payments/schema.ts';
import type { PostResult } from '../post-event.ts';

/**
 * A name as one routing-key or subject token: letters, digits, `-` and `_` stay, every other UTF-8
 * byte becomes `%XX`. A dot would split the token (a topic exchange and NATS both read dots), a
 * NATS subject may hold no whitespace, `*` or `>`; and the mapping is one-to-one, so two payments
 * never share a key. Gateways' ids are plain (`pi_3Q…`, `pay_…`, digits): they pass unchanged.
 */
export function routingToken(value: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(value)) return value;
  let token = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    token += /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return token;
}

/**
 * `<provider>.<charge id>`: the payment, the unit of order. A consistent-hash exchange sends one
 * payment's events to one queue; a NATS subject per payment lets a stream be partitioned by it.
 */
export function paymentRoutingKey(event: Pick<PaymentEventRow, 'provider' | 'gatewayChargeId'>): string {
  return `${routingToken(event.provider)}.${routingToken(event.gatewayChargeId)}`;
}

/** A failed attempt without an HTTP answer: what the lane records (last_error) and backs off on. */
export function brokerFailure(error: string): PostResult {
  return { kind: 'failed', status: null, error: error.replace(/[^\x20-\x7e]+/g, ' ').slice(0, 300), retryAfter: null };
}

export const BROKER_DELIVERED: PostResult = { kind: 'delivered', status: null };

/**
 * `publish`'s outcome, or a failure once `timeoutMs` passes without one (the broker never said it
 * has the message: it may have it, and a resend carries the same id), or when the job is aborted.
 */
export function withinDeadline(publish: Promise<PostResult>, timeoutMs: number, waitingFor: string, signal?: AbortSignal): Promise<PostResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const timer = setTimeout(() => settle(brokerFailure(`no ${waitingFor} within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => settle(brokerFailure(`aborted while waiting for the ${waitingFor}`));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    publish.then(settle, (error: unknown) => settle(brokerFailure(error instanceof Error ? error.message : String(error))));
  });
}

/** Resolves with `work`, or rejects after `ms`: a broker that stopped answering does not hold up the shutdown. */
export function boundedBy<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
