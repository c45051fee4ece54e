/**
 * A stable, low-cardinality metric label for an error: its snake_case `code` when it has one
 * (InboxError, the refetch errors, postgres.js's SQLSTATE), else its class name. Never the
 * message: messages carry ids and would make a new series per event.
 */
export function errorClassOf(error: unknown): string {
  if (error && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,60}$/.test(code)) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && /^[A-Za-z0-9_]{1,60}$/.test(name)) return name;
  }
  return 'unknown';
}
