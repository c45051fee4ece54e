import { stripeSignature } from '../../support/stripe.ts';
import type { DeliveryHistory } from './history.ts';

export interface SignedDelivery {
  eventId: string;
  body: string;
}

export interface GatewayOptions {
  /** Read before every attempt, so a test can move the target (a restarted process, another instance). */
  baseUrl: (eventId: string, attempt: number) => string;
  secret: string;
  history: DeliveryHistory;
  /** Deliveries in flight at once. */
  concurrency: number;
  /** Per-attempt timeout; gateways give up at ~10 s. */
  attemptTimeoutMs?: number;
  /** First pause between attempts of one event; it doubles per attempt up to maxRetryDelayMs (a gateway backs off; a test needs it short). */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Give up on an event after this long (its last outcome stays in the history). */
  giveUpAfterMs?: number;
  /** Called after every attempt (fault schedules hook in here). */
  onAttempt?: (outcome: number | 'network_error' | 'timeout') => void;
}

/**
 * Delivers each event the way a payment gateway does: sign, POST, and retry whatever did not get a
 * 200 (connection refused, reset, 503, timeout) until it does. Every attempt goes into the history.
 * The signature is made fresh per attempt by the official Stripe SDK.
 */
export async function deliverAll(deliveries: SignedDelivery[], options: GatewayOptions): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      await deliverOne(delivery, options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, deliveries.length) }, worker));
}

async function deliverOne(delivery: SignedDelivery, options: GatewayOptions): Promise<void> {
  const giveUpAt = Date.now() + (options.giveUpAfterMs ?? 120_000);
  for (let attempt = 1; ; attempt += 1) {
    const startedAt = Date.now();
    const outcome = await post(options.baseUrl(delivery.eventId, attempt), delivery.body, options);
    options.history.record({ eventId: delivery.eventId, startedAt, endedAt: Date.now(), outcome });
    options.onAttempt?.(outcome);
    if (outcome === 200 || Date.now() > giveUpAt) return;
    const delay = Math.min((options.retryDelayMs ?? 50) * 2 ** (attempt - 1), options.maxRetryDelayMs ?? 500);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function post(baseUrl: string, body: string, options: GatewayOptions): Promise<number | 'network_error' | 'timeout'> {
  try {
    const response = await fetch(`${baseUrl}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, options.secret) },
      body,
      signal: AbortSignal.timeout(options.attemptTimeoutMs ?? 10_000),
    });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    return error instanceof DOMException && error.name === 'TimeoutError' ? 'timeout' : 'network_error';
  }
}
