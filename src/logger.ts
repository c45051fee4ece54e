import { DrizzleQueryError } from 'drizzle-orm/errors';
import { pino, type Logger } from 'pino';

export type { Logger };

// The fields of a PostgreSQL error report that quote the input: `where` carries ~50 bytes of
// JSON around a jsonb parse error, `detail` the offending token or row, `hint` and
// `internal_query` whatever a function put there; postgres.js adds the statement and its
// parameters (`query`, `parameters`, `args`, `types`) in debug mode. None of it reaches a log line.
// drizzle's DrizzleQueryError carries the statement and its values as `query` and `params`.
const INPUT_QUOTING_FIELDS = ['where', 'detail', 'hint', 'internal_query', 'query', 'parameters', 'args', 'types', 'params'];

function stripInput(serialized: unknown, depth = 0): void {
  if (serialized === null || typeof serialized !== 'object' || depth > 4) return;
  const fields = serialized as Record<string, unknown>;
  for (const field of INPUT_QUOTING_FIELDS) delete fields[field];
  for (const value of Object.values(fields)) {
    if (Array.isArray(value)) for (const item of value) stripInput(item, depth + 1);
    else stripInput(value, depth + 1);
  }
}

/**
 * The error as pino should see it: every DrizzleQueryError in its causes and aggregated errors
 * replaced by the driver error it wraps. Its message is "Failed query: <statement> params:
 * <values>", and pino repeats a cause's message and stack in the outer error's, so dropping fields
 * afterwards is not enough. The errors themselves are left as they are: a changed error gets a
 * view (its prototype is the error) with the clean cause and `errors` as own properties. The
 * unwrap is db/query-error.ts's withoutQueryText, repeated: the foundation layer imports no db module.
 */
function withoutQueryWrappers(error: unknown, depth = 0): unknown {
  let unwrapped = error;
  while (unwrapped instanceof DrizzleQueryError) unwrapped = unwrapped.cause ?? new Error('a database statement failed (the driver gave no reason)');
  if (!(unwrapped instanceof Error) || depth > 8) return unwrapped;
  const cause = unwrapped.cause === undefined ? undefined : withoutQueryWrappers(unwrapped.cause, depth + 1);
  const errors = (unwrapped as Partial<AggregateError>).errors;
  const cleanErrors = Array.isArray(errors) ? errors.map((item) => withoutQueryWrappers(item, depth + 1)) : errors;
  const errorsChanged = Array.isArray(errors) && cleanErrors!.some((item: unknown, i: number) => item !== errors[i]);
  if (cause === unwrapped.cause && !errorsChanged) return unwrapped;
  const view = Object.create(unwrapped) as Error;
  Object.defineProperty(view, 'cause', { value: cause, enumerable: false });
  if (errorsChanged) Object.defineProperty(view, 'errors', { value: cleanErrors, enumerable: false });
  return view;
}

/** pino's own error serializer on the error without drizzle's wrappers, then the input-quoting fields removed (from aggregated and nested errors too). */
function errorWithoutInput(error: unknown): unknown {
  const serialized: unknown = pino.stdSerializers.err(withoutQueryWrappers(error) as Error);
  stripInput(serialized);
  return serialized;
}

/**
 * JSON logs on stdout. Secrets and signature headers are redacted wherever they appear; payload
 * bodies are never passed to the logger in the first place, and an error's `err` is serialized
 * without the fields in which PostgreSQL quotes its input (see INPUT_QUOTING_FIELDS).
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
