import { z } from 'zod';

/**
 * What the connection to PostgreSQL allows. The defaults fit a direct connection (or a pooler in
 * session mode); behind a transaction pooler (PgBouncer `pool_mode = transaction`, and the managed
 * equivalents) a server session belongs to a client only for one transaction, so anything that
 * outlives a transaction — named prepared statements, LISTEN — needs a setting here.
 */
export interface DatabaseConfig {
  /**
   * False: the driver sends every statement unnamed (parse, bind, execute each time), for a pooler
   * that does not carry protocol-level prepared statements (PgBouncer before 1.21, or with
   * `max_prepared_statements = 0`, the default before 1.24). Costs the hot paths a parse and plan
   * per statement (docs/deployment.md#behind-a-pooler).
   */
  preparedStatements: boolean;
  /**
   * False: pg-boss does not LISTEN, and workers find new jobs by polling every
   * WORKER_POLLING_INTERVAL_SECONDS instead of being woken by the NOTIFY of each insert. LISTEN
   * needs a session of its own: through a transaction pooler it registers on whichever server
   * connection ran it, and notifications never reach the client.
   */
  listenNotify: boolean;
  /**
   * Where the inbox's migrations run: a direct (or session-mode) URL when DATABASE_URL is a pooler
   * that refuses DDL or cuts long statements. Undefined: DATABASE_URL (the migration lock is
   * transaction-scoped, so a transaction pooler is fine).
   */
  migrationUrl: string | undefined;
}

// libpq's modes, and pg's `no-verify`. postgres.js takes any other word for "use TLS" and fails
// at the handshake, far from the typo.
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];
const URL_SHAPE = 'postgres://user@host:5432/database';

/**
 * What a connection URL must name before anything connects with it. Each driver fills what is
 * missing with libpq's defaults (the OS user, a database of that name, localhost): `postgres://`
 * once migrated the local server's default database. The problems never quote the URL: it may
 * hold a password.
 */
function postgresUrlProblems(value: string): string[] {
  if (!/^postgres(ql)?:\/\//.test(value)) return ['must be a postgres:// or postgresql:// URL'];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return ['cannot be read as a URL: check the port (1–65535) and percent-encode any of : / @ ? # % in the user name and password'];
  }
  const problems: string[] = [];
  if (url.hostname === '' && !url.searchParams.has('host')) problems.push(`names no host (${URL_SHAPE}, or ?host=/socket/dir for a unix socket)`);
  if (url.port === '0') problems.push('port 0 is not a port PostgreSQL can listen on (1–65535)');
  if (url.username === '') problems.push(`names no user (${URL_SHAPE})`);
  if (url.pathname.replace(/^\//, '') === '') problems.push(`names no database (${URL_SHAPE})`);
  const sslMode = url.searchParams.get('sslmode');
  if (sslMode !== null && !SSL_MODES.includes(sslMode)) problems.push(`sslmode must be one of ${SSL_MODES.join(', ')}`);
  return problems;
}

export const postgresUrl = z.string().superRefine((value, ctx) => {
  for (const message of postgresUrlProblems(value)) ctx.addIssue({ code: 'custom', message });
});
const flag = (fallback: 'true' | 'false') =>
  z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default(fallback)
    .transform((value) => value === 'true');

/** The connection's variables, spread into config.ts's one env schema. */
export const databaseEnvKeys = {
  DATABASE_PREPARED_STATEMENTS: flag('true').describe(
    "`false` behind a transaction pooler that does not carry protocol-level prepared statements (PgBouncer < 1.21, or `max_prepared_statements = 0`): every statement goes unnamed (the service's and pg-boss's), and each connection sends one statement at a time (no pipelining: PgBouncer loses an answer sent behind another statement's). See [Behind a pooler](deployment.md#behind-a-pooler).",
  ),
  DATABASE_LISTEN_NOTIFY: flag('true').describe(
    '`false` when workers cannot hold a session of their own (a transaction pooler): no LISTEN, no NOTIFY per job; workers poll every `WORKER_POLLING_INTERVAL_SECONDS`. Set it the same on every instance.',
  ),
  DATABASE_MIGRATION_URL: postgresUrl.optional().meta({
    whenUnset: '`DATABASE_URL`',
    description:
      "Where the inbox's migrations run, if not through `DATABASE_URL` (a pooler that refuses DDL or cuts long statements, or a role with DDL rights). Only with `DATABASE_URL`; checked as it is.",
  }),
};

type DatabaseValues = z.output<z.ZodObject<typeof databaseEnvKeys>>;

/** A migration URL without DATABASE_URL would migrate one database while the service uses the embedded one. */
export function databaseConfigProblems(e: Partial<DatabaseValues> & { DATABASE_URL?: string }): string[] {
  return e.DATABASE_MIGRATION_URL !== undefined && e.DATABASE_URL === undefined
    ? ['DATABASE_MIGRATION_URL: set only together with DATABASE_URL (without it the service uses its embedded PostgreSQL)']
    : [];
}

export function databaseConfig(e: DatabaseValues): DatabaseConfig {
  return { preparedStatements: e.DATABASE_PREPARED_STATEMENTS, listenNotify: e.DATABASE_LISTEN_NOTIFY, migrationUrl: e.DATABASE_MIGRATION_URL };
}
