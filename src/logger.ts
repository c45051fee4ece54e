import { pino, type Logger } from 'pino';
import { withoutInput, withoutInputFields } from './error-redaction.ts';

export type { Logger };

/**
 * pino's own error serializer on the error as it may be shown, then the fields that quote input
 * removed (error-redaction.ts: the rules last_error and job output follow too). Both steps: pino
 * repeats a cause's message and stack in the outer error's, so dropping fields alone is not enough.
 */
function errorWithoutInput(error: unknown): unknown {
  return withoutInputFields(pino.stdSerializers.err(withoutInput(error) as Error));
}

/**
 * JSON logs on stdout. Secrets and signature headers are redacted wherever they appear; payload
 * bodies are never passed to the logger in the first place, and an error's `err` is serialized
 * without the fields in which PostgreSQL quotes its input (see error-redaction.ts).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'webhook-inbox' },
      serializers: { err: errorWithoutInput },
      redact: {
        paths: [
          'secret',
          'secrets',
          '*.secret',
          '*.secrets',
          'headers["stripe-signature"]',
          'headers["webhook-signature"]',
          'headers.authorization',
          'headers["asaas-access-token"]',
          'headers["x-hub-signature"]',
          'headers["x-hub-signature-256"]',
          'headers["x-signature"]',
          'headers["x-shopify-hmac-sha256"]',
          'headers["x-webhook-asymmetric-signature"]',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
