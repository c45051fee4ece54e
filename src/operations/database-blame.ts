import { isDatabaseUnreachable } from '../db/database-unreachable.ts';
import { SigningKeysUnavailableError } from '../gateways/shared/signing-keys-error.ts';
import { RefetchError } from '../refetch/errors.ts';

/**
 * Errors about a remote other than the database: a gateway's API (refetch, backfill), a gateway's
 * signing keys (verify). Their causes carry the same network codes as the database's (ENOTFOUND,
 * ECONNREFUSED…), so the walk stops at them: a gateway that cannot be reached is not a database
 * that cannot be reached.
 */
const isAboutAGateway = (error: Error) => error instanceof RefetchError || error instanceof SigningKeysUnavailableError;

/** The database cannot be reached, and not through a gateway's error: inboxctl's exit 3, the faces' 503. */
export const blamesTheDatabase = (error: unknown): boolean => isDatabaseUnreachable(error, isAboutAGateway);
