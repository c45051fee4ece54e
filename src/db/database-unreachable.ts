import { withoutQueryText } from '../error-redaction.ts';
import { unixSocketDirectory } from './socket-url.ts';
import { CodedError } from '../errors.ts';

// The database is not there, or not there for us: refused, unknown host, TLS refused, wrong
// password or role, no such database, shutting down. Not a bug of ours, and not the input's.
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // postgres.js 4's own words for a TLS the server refused or could not finish.
  'SSL_NOT_SUPPORTED',
  'SSL_NEGOTIATION_NOT_SUPPORTED',
  'TLS_HANDSHAKE_FAILED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  '28P01',
  '28000',
  '3D000',
  '57P01',
  '57P03',
]);

/**
 * Whether an error (or one it wraps) means "the database is not there (or not ours)" rather than
 * "the operation failed". `aboutAnotherRemote`: errors whose causes are another server's (a
 * gateway's), where the same network codes say nothing about the database; the walk stops there.
 */
export function isDatabaseUnreachable(error: unknown, aboutAnotherRemote: (error: Error) => boolean = () => false): boolean {
  for (let e: unknown = error; e instanceof Error && !aboutAnotherRemote(e); e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isDatabaseUnreachable(inner, aboutAnotherRemote))) return true;
  }
  return false;
}

/**
 * host:port/database, or the socket directory for libpq's ?host= form: where a connection went,
 * never who with what password. The URL passed the config's checks (src/config/database-config.ts).
 */
export function databaseTarget(url: string): string {
  const parsed = new URL(url);
  const socketDir = unixSocketDirectory(parsed);
  const host = socketDir === undefined ? parsed.host : `${socketDir}:${parsed.port || '5432'}`;
  return `${host}${parsed.pathname}`;
}

/** The driver's own words: a connection error names host and port at most, a server error the role or database. */
export function databaseFailureReason(error: unknown): string {
  const cause = withoutQueryText(error);
  // Node's connect to a name with several addresses (localhost: ::1 and 127.0.0.1) fails with an
  // AggregateError whose own message is empty.
  if (cause instanceof AggregateError && cause.message === '') return [...new Set(cause.errors.map(databaseFailureReason))].join('; ');
  if (cause instanceof Error) return cause.message || String((cause as { code?: unknown }).code ?? cause.name);
  return String(cause);
}

/** The database of `variable` could not be reached at start; the message is the one line an operator reads. */
export class DatabaseUnreachableError extends CodedError {
  readonly code = 'database_unreachable';
  /** host:port/database (databaseTarget). */
  readonly target: string;
  readonly reason: string;
  constructor(url: string, variable: string | undefined, cause: unknown) {
    const target = databaseTarget(url);
    const reason = databaseFailureReason(cause);
    super(`cannot reach the database at ${target}${variable ? ` (${variable})` : ''}: ${reason}`, { cause });
    this.target = target;
    this.reason = reason;
  }
}

/** Runs `work`; an unreachable database becomes a DatabaseUnreachableError for `url`, anything else passes as it is. */
export async function reachingDatabase<T>(url: string, variable: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isDatabaseUnreachable(error) ? new DatabaseUnreachableError(url, variable, error) : error;
  }
}
