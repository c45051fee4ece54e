import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { IncompleteBodyError, InboxError, PayloadTooLargeError, UnknownProviderError } from '../errors.ts';
import type { Ingestor } from '../inbox/group-commit.ts';
import { validateNormalizedEvent } from '../inbox/normalized-event.ts';
import type { ConfiguredProvider } from '../config/config.ts';
import type { ProviderDriver, WebhookRequest } from '../providers/types.ts';
import type { AppEnv } from './env.ts';

export interface WebhookRouteDeps {
  providers: ReadonlyMap<string, ConfiguredProvider>;
  ingestor: Ingestor;
  maxBodyBytes: number;
  clock: () => Date;
  logger: Logger;
}

type Env = { Variables: AppEnv['Variables'] & { driver: ProviderDriver } };

/**
 * POST /webhooks/:provider: verify the raw bytes, normalise, store-and-enqueue in one transaction,
 * and only then answer 200. Exactly 200 (never 201/204): some gateways (Asaas, Pagar.me postbacks)
 * count nothing else as delivered.
 */
export function createWebhookRoute(deps: WebhookRouteDeps): Hono<Env> {
  const route = new Hono<Env>();
  route.post(
    '/webhooks/:provider',
    async (c, next) => {
      // Before the body is read: an unknown provider costs nothing.
      const name = c.req.param('provider');
      const provider = deps.providers.get(name);
      if (!provider) throw new UnknownProviderError(name);
      c.set('driver', provider.driver);
      await next();
    },
    bodyLimit({
      maxSize: deps.maxBodyBytes,
      onError: () => {
        throw new PayloadTooLargeError(deps.maxBodyBytes);
      },
    }),
    async (c) => {
      const provider = c.req.param('provider');
      const driver = c.get('driver');
      const rawBody = await readRawBody(c.req.raw);
      const request: WebhookRequest = {
        rawBody,
        header: (name) => c.req.header(name),
        query: new URL(c.req.url).searchParams,
      };
      const now = deps.clock();
      await driver.verify(request, now);
      const event = validateNormalizedEvent(driver.parse(request, now));
      const outcome = await deps.ingestor.ingest({ provider, event, rawBody });
      c.set('deliveryOutcome', outcome.kind);
      c.get('logger').info(
        { provider, eventId: event.eventId, eventType: event.eventType, outcome: outcome.kind, inboxId: outcome.kind === 'accepted' ? outcome.inboxId : undefined },
        'delivery stored',
      );
      return c.json({ received: true }, 200);
    },
  );
  return route;
}

/** The body's bytes; a sender that disconnects mid-body is a client failure, not a server error. */
async function readRawBody(request: Request): Promise<Buffer> {
  try {
    return Buffer.from(await request.arrayBuffer());
  } catch (error) {
    if (error instanceof InboxError) throw error;
    throw new IncompleteBodyError({ cause: error });
  }
}
