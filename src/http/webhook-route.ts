import { Hono } from 'hono';
import type { Logger } from 'pino';
import { ContentEncodingUnsupportedError, UnknownProviderError } from '../errors.ts';
import type { Ingestor } from '../inbox/group-commit.ts';
import { eventFingerprint } from '../inbox/event-fingerprint.ts';
import { validateNormalizedEvent } from '../inbox/normalized-event.ts';
import type { UnknownAccountWatch } from '../inbox/unknown-accounts.ts';
import type { ProviderDriver, WebhookRequest } from '../gateways/shared/webhook-driver.ts';
import type { AppEnv } from './env.ts';
import { readBodyWithin } from './read-body.ts';

export interface WebhookRouteDeps {
  /** The driver of the provider a webhook request's path names; undefined: no such provider here (404). */
  driverFor(provider: string): ProviderDriver | undefined;
  ingestor: Ingestor;
  maxBodyBytes: number;
  clock: () => Date;
  logger: Logger;
  /** Told the account of every stored event that names one (an unknown one is reported once). */
  accounts?: UnknownAccountWatch;
}

/** A Content-Encoding other than none or `identity`. */
function isEncoded(contentEncoding: string | undefined): boolean {
  const value = contentEncoding?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'identity';
}

/**
 * POST /webhooks/:provider: verify the raw bytes, normalise, store-and-enqueue in one transaction,
 * and only then answer 200. Exactly 200 (never 201/204): some gateways (Asaas, Pagar.me postbacks)
 * count nothing else as sent.
 */
export function createWebhookRoute(deps: WebhookRouteDeps): Hono<AppEnv> {
  const route = new Hono<AppEnv>();
  route.post('/webhooks/:provider', async (c) => {
    const provider = c.req.param('provider');
    // Before the body is read: an unknown provider costs nothing.
    const driver = deps.driverFor(provider);
    if (!driver) throw new UnknownProviderError();
    c.set('webhookRequest', { provider });
    if (isEncoded(c.req.header('content-encoding'))) throw new ContentEncodingUnsupportedError();
    const rawBody = await readBodyWithin(c.req.raw, deps.maxBodyBytes);
    let query: URLSearchParams | undefined;
    const request: WebhookRequest = {
      rawBody,
      header: (name) => c.req.header(name),
      // Parsed only for the drivers that read it (Mercado Pago's data.id), not on every request.
      get query() {
        return (query ??= new URL(c.req.url).searchParams);
      },
    };
    const now = deps.clock();
    const proof = await driver.verify(request, now);
    const parsed = driver.parse(request, now);
    // From here on a failure's log line names the event it was about.
    c.set('webhookRequest', { provider, eventId: parsed.eventId });
    const event = validateNormalizedEvent(parsed, rawBody);
    const fingerprint = eventFingerprint({ provider, ...event }, driver);
    const outcome = await deps.ingestor.ingest({ provider, event, rawBody, fingerprint, proof });
    c.set('webhookRequestOutcome', outcome.kind);
    if (event.account) deps.accounts?.observe(provider, event.account);
    const logged = {
      provider,
      eventId: event.eventId,
      eventType: event.eventType,
      outcome: outcome.kind,
      inboxId: outcome.kind === 'duplicate' ? undefined : outcome.inboxId,
    };
    // Still 200: the gateway must stop resending, and the stored event stays the one processed.
    // The body is kept in webhook_inbox_conflicts, never in the log.
    if (outcome.kind === 'conflicting_duplicate')
      c.get('logger').warn(logged, 'duplicate delivery says something else than the stored event; kept in webhook_inbox_conflicts');
    else c.get('logger').info(logged, 'delivery stored');
    return c.json({ received: true }, 200);
  });
  return route;
}
