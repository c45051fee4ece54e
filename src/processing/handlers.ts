import type { Transaction } from '../db/client.ts';
import type { SettledStatus } from '../db/schema.ts';
import type { EventDecision } from '../domain/payments/event-decision.ts';
import { PAYMENT_NOTICE_KIND, type PaymentFact } from '../domain/payments/payment-fact.ts';
import type { StoredEvent } from '../gateways/shared/webhook-driver.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import type { InboxEventRow } from '../inbox/sql/event-columns.ts';
import { CodedError } from '../errors.ts';

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

/** An event of a batch, with what its handler's `prepare` returned for it. */
export interface PreparedEvent<Context = unknown> {
  event: InboxEvent;
  context: Context;
}

/**
 * What applying an event did. `fact`: what the event meant when it was applied, kept on the inbox
 * row (webhook_inbox.fact) for audits, and a payment fact in payment_facts too (the database
 * copies it there as the row settles) for later folds; omitted, the column is left as it is.
 * `decision`: why it ended as it did (webhook_inbox.decision); omitted, the row has none.
 */
export interface AppliedEvent {
  outcome: SettledStatus;
  fact?: unknown;
  decision?: EventDecision;
}

/** What an event no handler is registered for gets: stored, looked at by nobody. */
export function notAPaymentEvent(kind: string): AppliedEvent {
  return { outcome: 'ignored', decision: { decision: 'not_a_payment_event', detail: { kind } } };
}

/**
 * A handler owns the kinds it registers for. `prepare` runs per event OUTSIDE any transaction,
 * before the inbox row is locked: the place for slow I/O such as fetching the resource's true
 * state from the gateway (no database lock is ever held across a network call). `apply` runs
 * inside one transaction for a whole batch of events, their inbox rows locked and pending: it
 * locks its own domain rows FOR UPDATE, changes them, and says per event (same order) whether the
 * event changed anything. A batch holds at most one job per resource from pg-boss, but may hold
 * several events of one domain row (a replay beside a new event): apply them in the order given.
 * Throwing rolls the batch back; each event is then tried alone, so one bad event fails only its
 * own job.
 */
export interface EventHandler<Context = unknown> {
  readonly name: string;
  readonly kinds: readonly string[];
  prepare?(event: InboxEvent, signal: AbortSignal): Promise<Context>;
  apply(tx: Transaction, events: readonly PreparedEvent<Context>[]): Promise<AppliedEvent[]>;
}

export interface HandlerRegistry {
  handlerFor(kind: string): EventHandler | undefined;
}

/** Routing table by kind; two handlers claiming one kind is a programming error, caught at start. */
export function createHandlerRegistry(handlers: readonly EventHandler[]): HandlerRegistry {
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
  return `${provider.driver.name}:${stored.eventType}`;
}

export class ProviderNotConfiguredError extends CodedError {
  readonly code = 'provider_not_configured';
  constructor(provider: string) {
    super(`No provider named "${provider}" is configured in this process, so its events cannot be read. Restore its configuration, then replay.`);
  }
}

/** The event as its handler sees it, and that handler (none: the event is `ignored`). */
export function routeEvent(
  deps: { providers: ReadonlyMap<string, ConfiguredProvider>; handlers: HandlerRegistry },
  row: InboxEventRow,
): { event: InboxEvent; handler: EventHandler | undefined } {
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new ProviderNotConfiguredError(row.provider);
  const fact = provider.driver.toPaymentFact(row);
  const event: InboxEvent = { inboxId: row.id, provider, stored: row, kind: canonicalKind(provider, row, fact), fact };
  return { event, handler: deps.handlers.handlerFor(event.kind) };
}
