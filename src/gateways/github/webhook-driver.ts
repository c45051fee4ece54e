import { MalformedPayloadError } from '../../errors.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, WebhookRequest } from '../shared/webhook-driver.ts';
import { type HmacScheme, hmacVerification } from '../shared/hmac-verification.ts';
import { parseJson, readPath } from '../shared/json-body.ts';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body with the hook's secret
 * (octokit/webhooks-methods compares the whole `sha256=…` string). The legacy SHA-1 header is
 * ignored. Form-encoded hooks (`payload=<urlencoded JSON>`) are signed over the raw form body too.
 * Dedupe key: `X-GitHub-Delivery`. GitHub's docs say a requested redelivery reuses it; it is one
 * GUID per event, so two hooks receiving one event share it (each provider name has its own
 * dedupe space, so that only matters if two hooks point at one provider name).
 * Type: `X-GitHub-Event` plus the body's `action` (`issues.opened`). Resource: the repository
 * (`full_name`), else the organization: events of one repository are serialised together.
 * Occurred at: the receipt time; GitHub sends no event time.
 * Not a payment source: stored, then ignored unless a handler is registered.
 */

const scheme: HmacScheme = { header: 'x-hub-signature-256', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=', prefixRequired: true };

function bodyJson(request: WebhookRequest): unknown {
  if (request.header('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    const payload = new URLSearchParams(request.rawBody.toString('utf8')).get('payload');
    if (payload === null) throw new MalformedPayloadError('The form-encoded GitHub body has no payload field.');
    return parseJson(Buffer.from(payload, 'utf8'));
  }
  return parseJson(request.rawBody);
}

function requiredHeader(request: WebhookRequest, name: string): string {
  const value = request.header(name)?.trim();
  if (!value) throw new MalformedPayloadError(`The ${name} header is missing; is this a GitHub delivery?`);
  return value;
}

function stringAt(json: unknown, path: string): string | undefined {
  const value = readPath(json, path);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export function createGithubDriver(settings: ProviderSettings): ProviderDriver {
  return {
    name: 'github',
    ...hmacVerification(scheme, settings),
    parse(request: WebhookRequest, now: Date): NormalizedEvent {
      const json = bodyJson(request);
      const event = requiredHeader(request, 'x-github-event');
      const action = stringAt(json, 'action');
      return {
        eventId: requiredHeader(request, 'x-github-delivery'),
        eventType: action ? `${event}.${action}` : event,
        resourceId: stringAt(json, 'repository.full_name') ?? stringAt(json, 'organization.login') ?? null,
        occurredAt: now,
        occurredAtIsRequestTime: true,
        payload: json,
      };
    },
    toPaymentFact: () => null,
  };
}

// No automatic retries; deliveries of the last 3 days can be redelivered by hand or by API.
export const githubDriver: DriverDefinition = { create: createGithubDriver, requiresSecret: true, resendWindowDays: 3 };
