import type { PaymentFact } from '../../domain/payments/payment-fact.ts';
import type { WebhookRequestProof, Reverification, StoredWebhookRequest } from './proof.ts';

/** What a driver sees of a request: the exact bytes, lower-cased headers, and the query string. */
export interface WebhookRequest {
  readonly rawBody: Buffer;
  header(name: string): string | undefined;
  readonly query: URLSearchParams;
}

/** One request reduced to what the inbox needs, the same shape for every gateway. */
export interface NormalizedEvent {
  /** The gateway's id for the event, or a key derived from the business fact (see derived-key.ts). */
  eventId: string;
  eventType: string;
  /** The resource the event is about (a charge id, …): the unit of serialisation. */
  resourceId: string | null;
  /** When it happened at the gateway; the receipt time when the gateway sends no timestamp. */
  occurredAt: Date;
  /**
   * True when occurredAt is the time of this request (the receipt time, or a sender's attempt
   * timestamp), not of the event: it changes on every resend, so it says nothing about what the
   * event means (the fingerprint leaves it out).
   */
  occurredAtIsRequestTime?: boolean;
  /** The body as JSON for the `payload` column (form-encoded bodies are decoded into an object). */
  payload: unknown;
  /**
   * The gateway account the event belongs to when one endpoint receives for many (a Stripe Connect
   * connected account, `acct_…`); null or absent for a direct integration (docs/accounts.md).
   */
  account?: string | null;
}

/** A stored event as processing reads it back (a replay sees exactly what was received). */
export interface StoredEvent {
  provider: string;
  eventId: string;
  eventType: string;
  resourceId: string | null;
  occurredAt: Date;
  payload: unknown;
  /** webhook_inbox.account: the gateway account the event belongs to; null (or absent) for a direct integration. */
  account?: string | null;
  /**
   * True when the payload is not exactly the body: jsonb could not hold something in it (U+0000,
   * a lone surrogate, bytes that are not UTF-8: each now U+FFFD; a number beyond a double: now
   * its source text, a string). The exact bytes are in raw_body. A handler that must see every
   * value as sent checks this first.
   */
  payloadLossy: boolean;
}

/**
 * One gateway's rules. Pure: no I/O, no clock of its own (`now` is passed in), so every driver is
 * tested with published vectors and independent signers only.
 */
export interface ProviderDriver {
  /** The built-in driver's name (`stripe`, `hmac`, …): a provider `stripe-br` runs the driver `stripe`. */
  readonly name: string;
  /**
   * Throws (or rejects with) SignatureError when the request is not authentic; otherwise answers
   * how it was authenticated (proof.ts), stored with the event. Runs before any parsing. May be
   * async only to fetch public keys (JWKS); it never touches the database.
   */
  verify(request: WebhookRequest, now: Date): WebhookRequestProof | Promise<WebhookRequestProof>;
  /**
   * The same check run again on a stored request against the secrets configured now
   * (`inboxctl verify`, an audit after a rotation): which secret matches, or that none does.
   */
  reverify(stored: StoredWebhookRequest): Reverification | Promise<Reverification>;
  /** Throws MalformedPayloadError when the body cannot be understood. */
  parse(request: WebhookRequest, now: Date): NormalizedEvent;
  /** Maps an event to the payments domain's canonical fact; null = not a payment event (ignored). */
  toPaymentFact(event: StoredEvent): PaymentFact | null;
  /**
   * Thin gateways only: the charge id of a notification that says a charge changed but not how
   * (Mercado Pago's `payment.updated`). Processing re-reads that charge from the gateway API.
   * Null for anything else.
   */
  toPaymentNotice?(event: StoredEvent): string | null;
}

/** What configuration hands a driver factory for one named provider. */
export interface ProviderSettings {
  /** The provider's name in URLs and in the inbox (`stripe`, `stripe-br`, …). */
  name: string;
  /** Every secret that may have signed a request: more than one during a rotation. */
  secrets: string[];
  signatureToleranceSeconds: number;
  /** Driver-specific options from the config file, validated by the driver's own schema. */
  options: Record<string, unknown>;
  /**
   * The accounts under this provider that each have a webhook token of their own (Asaas
   * subaccounts, INBOX_CONFIG `accounts`): a delivery carrying one's token is that account's
   * (docs/accounts.md). Only for a driver whose definition says `attributesAccountsByToken`.
   */
  accounts?: readonly ProviderAccount[];
}

/** One account under a provider and the webhook token its deliveries carry. */
export interface ProviderAccount {
  /** What webhook_inbox.account, payments.account and the outbound event say. */
  id: string;
  token: string;
}

export interface DriverDefinition {
  /** Throws ConfigError listing every problem with the settings. */
  create(settings: ProviderSettings): ProviderDriver;
  /** False for drivers that authenticate by other means (JWKS, none): a secret is then optional. */
  requiresSecret: boolean;
  /**
   * How long the gateway may resend an event (its documented retry window, rounded up). Retention
   * must exceed it, or a late resend of a purged event would pass as new.
   */
  resendWindowDays: number;
  /** The driver tells an account's deliveries by the token they carry (settings.accounts): Asaas subaccounts. */
  attributesAccountsByToken?: true;
}
