import { isUtf8 } from 'node:buffer';
import type { EventSource } from '../db/schema.ts';
import { EventUnstorableError } from '../errors.ts';
import { wasAlteredByParse } from '../gateways/shared/json-body.ts';
import type { IncomingEvent } from './incoming-event.ts';

/**
 * One event as the INSERT's parameters, each in its column's text form. Built when the request
 * arrives, outside the transaction it will share: a payload that cannot become a parameter fails
 * that request alone, never the batch.
 */
export interface EventRow {
  provider: string;
  eventId: string;
  eventType: string;
  resourceId: string | null;
  /** The payload as jsonb can hold it (see toJsonbText). */
  payloadJson: string;
  /** Whether payloadJson says something other than the body (webhook_inbox.payload_lossy). */
  payloadLossy: boolean;
  rawBody: Buffer;
  /** ISO 8601 with a four-digit year (the gate keeps occurredAt within years 1–9999). */
  occurredAt: string;
  /** What the event says, hashed (event-fingerprint.ts): a later duplicate is compared with it. */
  fingerprint: string;
  source: EventSource;
  /** The proof of verification as JSON text (webhook_inbox.verification). */
  verificationJson: string;
  /** webhook_inbox.account: the gateway account the event belongs to, null for a direct integration. */
  account: string | null;
}

// JSON.stringify writes U+0000 as `\u0000` and a lone surrogate as `\udXXX` (a pair is written as
// the character itself), lower-case hex: exactly the escapes jsonb refuses. The cheap test finds
// any `\u` at all (most payloads have none: non-ASCII is written as is); only then the exact pass.
const ESCAPE_OR_ESCAPED_BACKSLASH = /\\(?:\\|u0000|ud[89a-f][0-9a-f]{2})/g;

/**
 * JSON text jsonb accepts: each `\u0000` and lone-surrogate escape becomes `\ufffd`, U+FFFD, the
 * replacement character. The pass consumes an escaped backslash whole, so the text `\\u0000`
 * (a backslash, then "u0000") is left as it is.
 */
export function toJsonbText(json: string): { text: string; replaced: boolean } {
  if (!json.includes('\\u')) return { text: json, replaced: false };
  let replaced = false;
  const text = json.replace(ESCAPE_OR_ESCAPED_BACKSLASH, (sequence) => {
    if (sequence === '\\\\') return sequence;
    replaced = true;
    return '\\ufffd';
  });
  return { text, replaced };
}

/**
 * Throws EventUnstorableError when the payload cannot be serialised (JSON.stringify throws on a
 * BigInt or a cycle, and answers undefined for a function): never a driver's JSON, but the one
 * place that would otherwise throw inside the shared transaction. The payload is marked lossy
 * when it was altered to be stored: here, while parsing, or because the body was not valid UTF-8.
 */
export function toEventRow({ provider, event, rawBody, fingerprint, proof, source = 'webhook' }: IncomingEvent): EventRow {
  let json: string | undefined;
  try {
    json = JSON.stringify(event.payload);
  } catch (error) {
    throw new EventUnstorableError({ cause: error });
  }
  if (json === undefined) throw new EventUnstorableError();
  const payload = toJsonbText(json);
  return {
    provider,
    eventId: event.eventId,
    eventType: event.eventType,
    resourceId: event.resourceId,
    payloadJson: payload.text,
    payloadLossy: payload.replaced || wasAlteredByParse(event.payload) || !isUtf8(rawBody),
    rawBody,
    occurredAt: event.occurredAt.toISOString(),
    fingerprint,
    source,
    verificationJson: JSON.stringify(proof),
    account: event.account ?? null,
  };
}
