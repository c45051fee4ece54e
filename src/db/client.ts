import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema.ts';

export type Database = PostgresJsDatabase<typeof schema>;
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
/** Either the pool or an open transaction: SQL functions take this so callers choose the scope. */
export type Executor = Database | Transaction;
/** What a raw statement needs of a postgres.js pool or transaction (the ingest hot path's prepared statements). */
export type StatementRunner = Pick<postgres.ISql, 'unsafe'>;

export interface DatabaseHandle {
  db: Database;
  sql: postgres.Sql;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  connectTimeoutSeconds: number;
  applicationName: string;
  /**
   * False behind a pooler that does not carry named prepared statements (DATABASE_PREPARED_STATEMENTS):
   * it overrides the `prepare: true` of the hot paths' statements too. Default true.
   */
  preparedStatements?: boolean;
}

export function connectDatabase(options: DatabaseOptions): DatabaseHandle {
  const sql = postgres(options.url, {
    max: options.poolSize,
    // postgres.js waits 30 s for a connection by default: far past a gateway's patience. A short
    // timeout turns an unreachable database into a prompt 503 the gateway will retry.
    connect_timeout: options.connectTimeoutSeconds,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    onnotice: () => {},
    prepare: options.preparedStatements ?? true,
    connection: { application_name: options.applicationName },
  });
  const db = drizzle(sql, { schema });
  return {
    db,
    sql,
    close: () => sql.end({ timeout: 5 }),
  };
}
