import type { ConfiguredProvider } from '../config/config.ts';
import type { Transaction } from '../db/client.ts';
import { PAYMENT_NOTICE_KIND, type PaymentFact } from '../domain/payments/payment-fact.ts';
import type { StoredEvent } from '../providers/types.ts';
import { type PaymentsHandlerDeps, createPaymentsHandler } from './payments-handler.ts';

export type HandlerOutcome = 'processed' | 'ignored';

/** One stored event on its way to a handler, with what routing already worked out. */
export interface InboxEvent {
  inboxId: number;
  provider: ConfiguredProvider;
  stored: StoredEvent;
  /** The canonical kind it is routed by (see canonicalKind). */
  kind: string;
  /** The driver's payment reading of the event, when it is a payment event. */
  fact: PaymentFact | null;
}

/**
 * A handler owns the kinds it registers for. `prepare` runs OUTSIDE any transaction, before the
 * inbox row is locked: the place for slow I/O such as fetching the resource's true state from the
 * gateway (no database lock is ever held across a network call). `apply` runs inside the job's
 * transaction with the inbox row locked: it locks its own domain row FOR UPDATE, changes it, and
 * says whether the event changed anything. Throwing from either rolls everything back and the
 * job is retried.
 */
export interface EventHandler<Context = unknown> {
  readonly name: string;
  readonly kinds: readonly string[];
  prepare?(event: InboxEvent, signal: AbortSignal): Promise<Context>;
  apply(tx: Transaction, event: InboxEvent, context: Context): Promise<HandlerOutcome>;
}

export interface HandlerRegistry {
  handlerFor(kind: string): EventHandler | undefined;
}

// The registrations: a new handler is one file and one line here.
export function createBuiltInHandlers(deps: PaymentsHandlerDeps): EventHandler[] {
  return [createPaymentsHandler(deps)];
}

/** The built-in handlers without a gateway refetcher (every payment kind ordered by occurred_at). */
export const builtInHandlers: readonly EventHandler[] = createBuiltInHandlers({});

/** Routing table by kind; two handlers claiming one kind is a programming error, caught at start. */
export function createHandlerRegistry(handlers: readonly EventHandler[] = builtInHandlers): HandlerRegistry {
  const byKind = new Map<string, EventHandler>();
  for (const handler of handlers) {
    for (const kind of handler.kinds) {
      const taken = byKind.get(kind);
      if (taken) throw new Error(`Handlers "${taken.name}" and "${handler.name}" both register for kind "${kind}".`);
      byKind.set(kind, handler);
    }
  }
  return { handlerFor: (kind) => byKind.get(kind) };
}

/**
 * Payment events route by their canonical kind (`payment.paid`, …), the same for every gateway;
 * a thin gateway's stateless notice about a charge routes as `payment.notice` (its meaning is read
 * from the gateway). Anything else routes by `<driver>:<event type>` (`github:push`,
 * `stripe:customer.created`), so a handler for a non-payment event registers for exactly that;
 * with no handler the event is `ignored`.
 */
export function canonicalKind(provider: ConfiguredProvider, stored: StoredEvent, fact: PaymentFact | null): string {
  if (fact) return fact.kind;
  if (provider.driver.toPaymentNotice?.(stored)) return PAYMENT_NOTICE_KIND;
  return `${provider.driver.driver}:${stored.eventType}`;
}
