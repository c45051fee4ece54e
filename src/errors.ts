/**
 * Failures the inbox reports to a caller. Each carries a stable snake_case `code` (what operators
 * grep for and what the JSON error body says) and the HTTP status a delivery gets for it.
 * Expected outcomes (accepted, duplicate) are values, never errors.
 */
export class InboxError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, status: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
  }
}

export class UnknownProviderError extends InboxError {
  constructor(provider: string) {
    super('unknown_provider', 404, `No provider named "${provider}" is configured. Check the URL path and the WEBHOOK_SECRET_<PROVIDER> / INBOX_CONFIG settings.`);
  }
}

export type SignatureFailure =
  | 'signature_missing'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'timestamp_outside_tolerance';

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

export class PayloadTooLargeError extends InboxError {
  constructor(limitBytes: number) {
    super('payload_too_large', 413, `The body exceeds the ${limitBytes}-byte limit (MAX_BODY_BYTES).`);
  }
}

/** The event could not be committed: the sender must retry; nothing was acknowledged. */
export class StorageUnavailableError extends InboxError {
  readonly retryAfterSeconds: number;
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super('storage_unavailable', 503, message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 5;
  }
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
