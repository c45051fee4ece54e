/**
 * What a failed statement or transaction says about whose fault it was:
 * - `data`: this input cannot be stored (SQLSTATE class 22 data exception, 23 integrity
 *   violation, 54 program limit exceeded). Sending the same input again fails again.
 * - `availability`: the database cannot take anything right now (08 connection exception, 40
 *   transaction rollback, 53 insufficient resources, 57 operator intervention, 58 system error;
 *   postgres.js's CONNECTION_* / CONNECT_TIMEOUT and the socket's own codes). Nothing to do with
 *   the input: the same input will pass later.
 * - `unknown`: anything else (a syntax error, pg-boss refusing a job, a bug): not provably the
 *   input's fault, so never a reason to refuse it for good.
 */
export type DatabaseFailure = 'data' | 'availability' | 'unknown';

const DATA_CLASSES = new Set(['22', '23', '54']);
const AVAILABILITY_CLASSES = new Set(['08', '40', '53', '57', '58']);
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const SQLSTATE = /^[0-9A-Z]{5}$/;
// The dedupe key: ON CONFLICT DO NOTHING means it never raises; if it ever did, the event is
// stored already, which is no reason to refuse it.
const DEDUPE_INDEX = 'webhook_event_keys_pkey';

export function classifyDatabaseError(error: unknown): DatabaseFailure {
  if (error instanceof AggregateError && error.errors.some((e) => classifyDatabaseError(e) === 'availability')) return 'availability';
  const { code, constraint_name: constraint } = (error ?? {}) as { code?: unknown; constraint_name?: unknown };
  if (typeof code !== 'string') return 'unknown';
  if (CONNECTION_CODES.has(code)) return 'availability';
  if (!SQLSTATE.test(code)) return 'unknown';
  const sqlClass = code.slice(0, 2);
  if (AVAILABILITY_CLASSES.has(sqlClass)) return 'availability';
  if (code === '23505' && constraint === DEDUPE_INDEX) return 'unknown';
  return DATA_CLASSES.has(sqlClass) ? 'data' : 'unknown';
}
