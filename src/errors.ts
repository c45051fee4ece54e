import { databaseErrorContext, withoutInput } from './error-redaction.ts';

/**
 * Every error the inbox throws on purpose. Its `code` is stable snake_case: what an operator greps
 * the logs for, what `inboxctl --json` and an HTTP error body say, and the `error_class` label of
 * a failed processing attempt. Every code is in one table, docs/errors.md. `name` is the class's.
 * Expected outcomes (accepted, duplicate) are values, never errors.
 *
 * There is no `status` here: the errors that reach HTTP are InboxErrors, which carry the status
 * their request is answered with; elsewhere `status` already names what a gateway answered
 * (RefetchError), and one word keeps one meaning.
 */
export abstract class CodedError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Failures the inbox answers an HTTP request with: the `code` the JSON error body says, and the request's status. */
export class InboxError extends CodedError {
  readonly code: string;
  readonly status: number;
  constructor(code: string, status: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = status;
  }
}

export class UnknownProviderError extends InboxError {
  // The name is the sender's path segment (kilobytes, control characters): the answer does not repeat it.
  constructor() {
    super('unknown_provider', 404, 'No provider of that name is configured. Check the URL path and the WEBHOOK_SECRET_<PROVIDER> / INBOX_CONFIG settings.');
  }
}

export type SignatureFailure = 'signature_missing' | 'signature_malformed' | 'signature_mismatch' | 'timestamp_outside_tolerance';

export class SignatureError extends InboxError {
  constructor(code: SignatureFailure, message: string) {
    super(code, 401, message);
  }
}

export class MalformedPayloadError extends InboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('malformed_payload', 400, message, options);
  }
}

/** The sender hung up before its body arrived whole: nothing to verify, nothing stored, no one to answer. */
export class IncompleteBodyError extends InboxError {
  constructor(options?: { cause?: unknown }) {
    super('body_incomplete', 400, 'The connection closed before the whole body arrived.', options);
  }
}

/**
 * A body sent compressed (Content-Encoding: gzip, br, …). The signature is verified over the bytes
 * as the gateway signed them and the body is never decoded, so such a request used to fail as a
 * signature_mismatch, which sends an operator off to rotate a secret that is fine.
 */
export class ContentEncodingUnsupportedError extends InboxError {
  constructor() {
    super(
      'content_encoding_unsupported',
      415,
      'The body was sent with a Content-Encoding; the inbox verifies and stores bodies exactly as signed, uncompressed. Send it without compression.',
    );
  }
}

export class PayloadTooLargeError extends InboxError {
  constructor(limitBytes: number) {
    super('payload_too_large', 413, `The body exceeds the ${limitBytes}-byte limit (MAX_BODY_BYTES).`);
  }
}

export type EventIdentifierField = 'eventId' | 'eventType' | 'resourceId' | 'account';

/**
 * An id, type or resource id that holds U+0000 or is not valid UTF-8. PostgreSQL text cannot hold
 * the first; the second would be stored lossily, so two different ids could become one and the
 * second be answered as a duplicate of the first. No gateway sends either.
 */
export class EventIdentifierError extends InboxError {
  constructor(field: EventIdentifierField) {
    super(
      'event_identifier_invalid',
      400,
      `The event's ${field} contains U+0000 or is not valid UTF-8; the inbox cannot store it as sent. Nothing was stored.`,
    );
  }
}

/** A time the inbox cannot store: outside years 1–9999 UTC (see OCCURRED_AT_RANGE). */
export class OccurredAtOutOfRangeError extends InboxError {
  constructor() {
    super(
      'occurred_at_out_of_range',
      400,
      "The event's time is outside 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z, the range the inbox stores. Nothing was stored.",
    );
  }
}

/** JSON nested deeper than any gateway sends; refused before it is parsed. */
export class PayloadTooDeepError extends InboxError {
  constructor(limit: number) {
    super('payload_too_deep', 400, `The JSON nests deeper than ${limit} levels. Nothing was stored.`);
  }
}

/**
 * The database refused the event for what it contains (a data error, SQLSTATE class 22, 23 or
 * 54, or a value that could not become a statement parameter). Resending the same bytes will not
 * help, so it is not a 503. The cause is for the log, never for the answer.
 */
export class EventUnstorableError extends InboxError {
  constructor(options?: { cause?: unknown }) {
    super('event_unstorable', 400, 'The database cannot store this event as sent; sending it again will not help. Nothing was stored.', options);
  }
}

/** The event could not be committed: the sender must retry; nothing was acknowledged. */
export class StorageUnavailableError extends InboxError {
  readonly retryAfterSeconds: number;
  constructor(
    message = 'The event could not be stored right now; send it again. Nothing was acknowledged.',
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super('storage_unavailable', 503, message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 5;
  }
}

export class ConfigError extends CodedError {
  readonly code = 'config_invalid';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * One line for an error, as the inbox row's last_error, pg-boss job output and inboxctl carry it:
 * `Class: message`, and for a database error what PostgreSQL names (SQLSTATE, table, column,
 * constraint) and the statement's step. Never a statement's text or a value it carried: this goes
 * through the rules the logs go through (error-redaction.ts).
 */
export function describeError(error: unknown): string {
  const shown = withoutInput(error);
  if (!(shown instanceof Error)) return String(shown);
  const context = databaseErrorContext(shown);
  return `${shown.name}: ${shown.message}${context === undefined ? '' : ` (${context})`}`;
}
