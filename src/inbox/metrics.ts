import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The receiver's metrics: the webhook requests gateways send to /webhooks/:provider (counted by
 * the http face's middleware, src/http/webhook-request-metrics.ts) and the inbox's gauges the
 * periodic database refresh sets (src/operations/gauge-refresher.ts). Composed with the other
 * subsystems' into one registry by src/observability/metrics.ts.
 */

/** What the answer to a webhook request meant. Statuses stay numeric so the label matches the HTTP answer. */
export type WebhookRequestOutcome = 'accepted' | 'duplicate' | '400' | '401' | '404' | '413' | '500' | '503';

/** The requests gateways send to /webhooks/:provider (not the pushes to destinations: src/delivery/metrics.ts). */
export interface WebhookRequestMetrics {
  /** One webhook request answered, by provider and outcome, with the time its answer took. */
  answered(provider: string, outcome: WebhookRequestOutcome, ackSeconds: number): void;
  /** A duplicate (also counted as one) whose meaning differs from the stored event: its body went to webhook_inbox_conflicts. */
  conflictingDuplicate(provider: string): void;
  /** A stored event named a gateway account the configuration does not know: counted once per (provider, account) per process. */
  unknownAccount(provider: string): void;
}

/** The inbox's gauges, set from the database by the gauge refresher. */
export interface InboxGauges {
  inboxEvents: Gauge<'provider' | 'status'>;
  inboxEventsLastHour: Gauge<'provider' | 'status'>;
  oldestPendingAge: Gauge<'provider'>;
  lastWebhookRequest: Gauge<'provider'>;
}

// Acks are bounded by COMMIT_DEADLINE_MS (5 s by default); buckets resolve the group-commit range.
const ACK_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `providers`: the configured ones, whose conflicting-duplicate counters start at 0 (so `increase()` sees the first). */
export function declareWebhookRequestMetrics(registers: Registry[], providers: readonly string[]): WebhookRequestMetrics {
  const webhookRequests = new Counter({
    name: 'webhook_requests_total',
    help: 'Webhook requests by provider and outcome (accepted, duplicate, or the HTTP status of a rejection).',
    labelNames: ['provider', 'outcome'],
    registers,
  });
  // The name this counter had before "delivery" was kept for the push to destinations: emitted
  // too, for one release, so dashboards and alerts on it keep working (docs/observability.md).
  const webhookRequestsOldName = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Deprecated alias of webhook_requests_total (same values); removed in the next release.',
    labelNames: ['provider', 'outcome'],
    registers,
  });
  const ackDuration = new Histogram({
    name: 'webhook_ack_duration_seconds',
    help: 'Time from receiving a webhook request to sending its answer (for 200: after COMMIT).',
    labelNames: ['provider', 'outcome'],
    buckets: ACK_BUCKETS,
    registers,
  });
  const conflictingDuplicates = new Counter({
    name: 'webhook_conflicting_duplicates_total',
    help: 'Duplicate webhook requests (200, not processed) whose meaning differs from the stored event of their id, by provider; kept in webhook_inbox_conflicts.',
    labelNames: ['provider'],
    registers,
  });
  for (const provider of providers) conflictingDuplicates.inc({ provider }, 0);
  const unknownAccounts = new Counter({
    name: 'inbox_unknown_accounts_total',
    help: 'Gateway accounts named by stored events that the configuration does not know (knownAccounts, accounts, connect), each counted once per process, by provider; the events are stored and folded as usual.',
    labelNames: ['provider'],
    registers,
  });
  for (const provider of providers) unknownAccounts.inc({ provider }, 0);
  return {
    answered(provider, outcome, ackSeconds) {
      webhookRequests.inc({ provider, outcome });
      webhookRequestsOldName.inc({ provider, outcome });
      ackDuration.observe({ provider, outcome }, ackSeconds);
    },
    conflictingDuplicate: (provider) => conflictingDuplicates.inc({ provider }),
    unknownAccount: (provider) => unknownAccounts.inc({ provider }),
  };
}

export function declareInboxGauges(registers: Registry[]): InboxGauges {
  const lastWebhookRequest = new Gauge({
    name: 'inbox_last_webhook_request_timestamp_seconds',
    help: "When the provider's newest webhook request was received (Unix time; backfilled rows do not count). No series before its first webhook request (from the database).",
    labelNames: ['provider'],
    registers,
  });
  // Its name before the rename, for one release (docs/observability.md): a copy of the gauge's
  // series read at each scrape, so the refresher sets one gauge and removing the alias is this.
  new Gauge({
    name: 'inbox_last_delivery_timestamp_seconds',
    help: 'Deprecated alias of inbox_last_webhook_request_timestamp_seconds (same values); removed in the next release.',
    labelNames: ['provider'],
    registers,
    async collect() {
      this.reset();
      for (const { labels, value } of (await lastWebhookRequest.get()).values) this.set(labels, value);
    },
  });
  return {
    inboxEvents: new Gauge({
      name: 'inbox_events',
      help: 'Inbox rows now pending or failed, by provider and status (from the database; same on every instance).',
      labelNames: ['provider', 'status'],
      registers,
    }),
    inboxEventsLastHour: new Gauge({
      name: 'inbox_events_received_last_hour',
      help: 'Inbox rows received in the last hour, by provider and current status (from the database; same on every instance).',
      labelNames: ['provider', 'status'],
      registers,
    }),
    oldestPendingAge: new Gauge({
      name: 'inbox_oldest_pending_age_seconds',
      help: 'Age of the oldest pending row per provider; 0 when none is pending (from the database).',
      labelNames: ['provider'],
      registers,
    }),
    lastWebhookRequest,
  };
}
