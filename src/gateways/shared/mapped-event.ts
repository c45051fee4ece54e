import { z } from 'zod';
import { MalformedPayloadError } from '../../errors.ts';
import type { NormalizedEvent, WebhookRequest } from './webhook-driver.ts';
import { derivedEventKey } from './derived-key.ts';
import { parseJson, readIdentifier, readPath } from './json-body.ts';
import { timestampFromJson } from './timestamps.ts';

/**
 * Where a configurable driver (hmac, token) finds the event's fields: a dotted JSON path into the
 * body or a header. Shared so both generic drivers read the same options the same way.
 */
export const fieldMappingShape = {
  idPath: z.string().min(1).optional(),
  idHeader: z.string().min(1).optional(),
  typePath: z.string().min(1).optional(),
  typeHeader: z.string().min(1).optional(),
  resourcePath: z.string().min(1).optional(),
  statusPath: z.string().min(1).optional(),
  occurredAtPath: z.string().min(1).optional(),
  occurredAtHeader: z.string().min(1).optional(),
};

export type FieldMapping = { [K in keyof typeof fieldMappingShape]?: string };

/**
 * Every mapping needs an event type; the rest is optional (no id → derived key, no time → receipt
 * time). `when` makes it run even when other options are invalid, so every problem is listed at once.
 */
export function requiringTypeSource<T extends z.ZodType<FieldMapping>>(schema: T) {
  return schema.refine((mapping) => mapping.typePath !== undefined || mapping.typeHeader !== undefined, {
    path: ['typePath'],
    message: 'typePath or typeHeader is required: where the event type is',
    when: () => true,
  });
}

function fromHeaderOrPath(request: WebhookRequest, json: unknown, header?: string, path?: string): unknown {
  if (header !== undefined) {
    const value = request.header(header);
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return path !== undefined ? readPath(json, path) : undefined;
}

function identifierFrom(request: WebhookRequest, json: unknown, header?: string, path?: string): string | undefined {
  if (header !== undefined) {
    const value = request.header(header)?.trim();
    if (value) return value;
  }
  return path !== undefined ? readIdentifier(json, path) : undefined;
}

/**
 * Parses a JSON body by a field mapping. Dedupe rule: the id at idHeader/idPath; when the gateway
 * sends none, derivedEventKey(resource, type, status, occurred_at) — the occurred_at only when the
 * gateway sent one (the receipt time differs on every resend).
 */
export function parseMappedEvent(request: WebhookRequest, now: Date, mapping: FieldMapping): NormalizedEvent {
  const json = parseJson(request.rawBody);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new MalformedPayloadError('The body is not a JSON object.');
  }
  const eventType = identifierFrom(request, json, mapping.typeHeader, mapping.typePath);
  if (eventType === undefined) {
    throw new MalformedPayloadError(`The body has no event type at ${mapping.typeHeader ? `header ${mapping.typeHeader}` : mapping.typePath}.`);
  }
  const resourceId = mapping.resourcePath ? (readIdentifier(json, mapping.resourcePath) ?? null) : null;
  const rawTime = fromHeaderOrPath(request, json, mapping.occurredAtHeader, mapping.occurredAtPath);
  const sentTime = rawTime === undefined || rawTime === null ? undefined : timestampFromJson(rawTime);
  if (rawTime !== undefined && rawTime !== null && sentTime === undefined) {
    throw new MalformedPayloadError(
      `The event time at ${mapping.occurredAtHeader ? `header ${mapping.occurredAtHeader}` : mapping.occurredAtPath} is not a timestamp this driver can read.`,
    );
  }
  const eventId =
    identifierFrom(request, json, mapping.idHeader, mapping.idPath) ??
    derivedEventKey({
      resourceId,
      eventType,
      status: mapping.statusPath ? (readIdentifier(json, mapping.statusPath) ?? null) : null,
      occurredAt: sentTime ?? null,
    });
  return { eventId, eventType, resourceId, occurredAt: sentTime ?? now, occurredAtIsRequestTime: sentTime === undefined, payload: json };
}
