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
 * The request headers a log line may show as sent; every other header's value is replaced. An
 * allowlist, not a list of signature headers: each gateway, and each `hmac` or `token` provider in
 * INBOX_CONFIG, names its own credential header, and a list of known ones misses the next.
 */
const LOGGABLE_HEADERS = new Set(['accept', 'content-encoding', 'content-length', 'content-type', 'host', 'user-agent', 'x-forwarded-for', 'x-request-id']);

function headersWithoutCredentials(headers: unknown): unknown {
  if (headers === null || typeof headers !== 'object') return headers;
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, LOGGABLE_HEADERS.has(name.toLowerCase()) ? value : '[redacted]']));
}

/**
 * JSON logs on stdout. Secrets are redacted wherever they appear and a request's headers show only
 * the harmless ones (LOGGABLE_HEADERS); payload bodies are never passed to the logger in the first
 * place, and an error's `err` is serialized without the fields in which PostgreSQL quotes its input
 * (see error-redaction.ts).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'webhook-inbox' },
      serializers: { err: errorWithoutInput, headers: headersWithoutCredentials },
      redact: {
        paths: ['secret', 'secrets', '*.secret', '*.secrets'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
