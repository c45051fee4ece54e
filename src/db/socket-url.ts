/**
 * libpq's way to name a unix socket in a URL, `postgresql://user@localhost:5432/db?host=/run/postgresql`
 * (a local PostgreSQL, Cloud SQL's proxy socket), as postgres.js needs it: the socket path as its own
 * option and no `host` parameter, which postgres.js would otherwise send to the server as a setting
 * and be refused ("unrecognized configuration parameter"). pg, under pg-boss, reads the URL as is.
 * `path` is present only for a socket, so the rest spreads into postgres.js's options as it is.
 */
export function postgresJsConnection(url: string): { url: string; path?: string } {
  const parsed = new URL(url);
  const socketDir = unixSocketDirectory(parsed);
  if (socketDir === undefined) return { url };
  parsed.searchParams.delete('host');
  return { url: parsed.toString(), path: `${socketDir.replace(/\/+$/, '')}/.s.PGSQL.${parsed.port || '5432'}` };
}

/** The unix socket's folder when the URL names one in libpq's form (`?host=/dir`); undefined for TCP. */
export function unixSocketDirectory(url: URL): string | undefined {
  const host = url.searchParams.get('host');
  return host?.startsWith('/') ? host : undefined;
}
