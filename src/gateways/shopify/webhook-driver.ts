import { MalformedPayloadError } from '../../errors.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, WebhookRequest } from '../shared/webhook-driver.ts';
import { type HmacScheme, hmacSecrets, verifyHmacSignature } from '../shared/hmac-verification.ts';
import { reverifySignature } from '../shared/reverify.ts';
import { parseJson, readIdentifier } from '../shared/json-body.ts';
import { parseLenientTimestamp } from '../shared/timestamps.ts';

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 of the raw body keyed with the app's
 * client secret (or the key shown in the shop admin for admin-created webhooks). Rotating the
 * secret takes up to an hour to reach every delivery: configure old and new (comma-separated).
 * The newer "events" webhooks send the same values under `shopify-*` names; both are read.
 * Dedupe key: `X-Shopify-Event-Id` (one per event: the same value on two webhooks is a duplicate),
 * else `X-Shopify-Webhook-Id` (one per delivery, the same on its retries).
 * Type `X-Shopify-Topic`; resource `admin_graphql_api_id`, else the body `id` as its exact digits
 * (Shopify ids exceed 2^53: parseJson keeps them as strings, never a rounded Number);
 * occurred_at `X-Shopify-Triggered-At` (nanosecond fractions), else the receipt time.
 * Not a payment source: stored, then ignored unless a handler is registered.
 */

const scheme: HmacScheme = { header: 'x-shopify-hmac-sha256', algorithm: 'sha256', encoding: 'base64', prefix: '', prefixRequired: false };
const eventsScheme: HmacScheme = { ...scheme, header: 'shopify-hmac-sha256' };

function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.header(`x-shopify-${name}`) ?? request.header(`shopify-${name}`);
  return value?.trim() || undefined;
}

export function createShopifyDriver(settings: ProviderSettings): ProviderDriver {
  const keys = hmacSecrets(settings.secrets);
  const verify = (request: WebhookRequest, now: Date) => {
    const used = request.header(scheme.header) === undefined && request.header(eventsScheme.header) !== undefined ? eventsScheme : scheme;
    return verifyHmacSignature(used, request, keys, now, settings.signatureToleranceSeconds);
  };
  return {
    name: 'shopify',
    verify,
    reverify: (stored) => reverifySignature(verify, stored),
    parse(request: WebhookRequest, now: Date): NormalizedEvent {
      const json = parseJson(request.rawBody);
      const eventId = header(request, 'event-id') ?? header(request, 'webhook-id');
      const topic = header(request, 'topic');
      if (!eventId || !topic) throw new MalformedPayloadError('The X-Shopify-Webhook-Id or X-Shopify-Topic header is missing; is this a Shopify delivery?');
      const triggeredAt = header(request, 'triggered-at');
      const occurredAt = triggeredAt === undefined ? now : parseLenientTimestamp(triggeredAt);
      if (occurredAt === undefined) throw new MalformedPayloadError('The X-Shopify-Triggered-At header is not a timestamp.');
      return {
        eventId,
        eventType: topic,
        resourceId: readIdentifier(json, 'admin_graphql_api_id') ?? readIdentifier(json, 'id') ?? null,
        occurredAt,
        occurredAtIsRequestTime: triggeredAt === undefined,
        payload: json,
      };
    },
    toPaymentFact: () => null,
  };
}

// 8 retries over 4 hours (changelog 2024-09-10): a day covers it.
export const shopifyDriver: DriverDefinition = { create: createShopifyDriver, requiresSecret: true, resendWindowDays: 1 };
