import { DrizzleQueryError } from 'drizzle-orm/errors';

/**
 * The driver's error beneath drizzle's wrapper. The wrapper's message is "Failed query: <the
 * statement> params: <every parameter>": the SQL is no answer for an operator, and the
 * parameters can hold payload bytes, which no message or log line may carry.
 */
export function withoutQueryText(error: unknown): unknown {
  if (!(error instanceof DrizzleQueryError)) return error;
  return error.cause ?? new Error('a database statement failed (the driver gave no reason)');
}
