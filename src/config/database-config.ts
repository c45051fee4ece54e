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
   * per statement (README "Behind a pooler").
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

const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL');
const flag = (fallback: 'true' | 'false') =>
  z.enum(['true', 'false'], { error: 'must be true or false' }).default(fallback).transform((value) => value === 'true');

/** The connection's variables, spread into config.ts's one env schema. */
export const databaseEnvKeys = {
  DATABASE_PREPARED_STATEMENTS: flag('true'),
  DATABASE_LISTEN_NOTIFY: flag('true'),
  DATABASE_MIGRATION_URL: postgresUrl.optional(),
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
