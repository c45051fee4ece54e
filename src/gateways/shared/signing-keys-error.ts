import { InboxError } from '../../errors.ts';

// Apart from jwks-keys.ts so that inboxctl can tell this error from a database's without loading jose.

/** The keys could not be fetched: the sender should retry (503), the request is not rejected as forged. */
export class SigningKeysUnavailableError extends InboxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('signing_keys_unavailable', 503, message, options);
  }
}
