import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { fromDrizzle } from 'pg-boss';
import postgres from 'postgres';
import { parseJsonText } from '../format/json-parse.ts';
import * as schema from './schema.ts';
import { postgresJsConnection } from './socket-url.ts';

export type Database = PostgresJsDatabase<typeof schema>;
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * The one interface every SQL function takes: a statement's text and its values, rows back. It is
 * pg-boss's own `executeSql` shape, so the same executor also carries pg-boss's job inserts into
 * the caller's transaction. Whether it is the pool or an open transaction is the caller's choice.
 *
 * The rows are what postgres.js gives for this connection: drizzle replaces its parsers for
 * timestamps (they arrive as text), and int8 arrives as text, so statements select times as epoch
 * milliseconds and ids as float8 rather than rely on a parser.
 */
export interface SqlExecutor {
  executeSql<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: Row[] }>;
}

/**
 * A postgres.js pool or transaction as an executor. Statements run as named prepared statements:
 * after a connection's first use, one Bind/Execute round trip with no parse or plan (the ingest
 * hot path's reason to take this one). So a statement's text must come from a bounded set.
 */
export function postgresExecutor(client: Pick<postgres.ISql, 'unsafe'>): SqlExecutor {
  return {
    async executeSql<Row>(text: string, values: unknown[] = []) {
      return { rows: (await client.unsafe(text, values as never[], { prepare: true })) as unknown as Row[] };
    },
  };
}

/**
 * A drizzle database or transaction as an executor, for the code that shares a drizzle
 * transaction with the payments domain (processing) or holds only the drizzle handle (operations,
 * dashboard). Statements go unprepared through drizzle's execute(), as its query builder sent them.
 */
export function drizzleExecutor(db: Database | Transaction): SqlExecutor {
  return fromDrizzle(db, drizzleSql) as SqlExecutor;
}

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
   * it overrides the `prepare: true` of the hot paths' statements too, and each connection then
   * sends one statement at a time (see connectPool). Default true.
   */
  preparedStatements?: boolean;
}

/**
 * json and jsonb values come back through parseJsonText, not postgres.js's JSON.parse: a payload's
 * keys as the gateway wrote them, escaped ones included, on every Node (src/format/json-parse.ts).
 * Values sent are serialised as postgres.js always did.
 */
const JSON_TYPES = { json: { to: 114, from: [114, 3802], serialize: (value: unknown) => JSON.stringify(value), parse: (text: string) => parseJsonText(text) } };

/** A postgres.js pool with the service's connection settings. */
export function connectPool(options: DatabaseOptions): postgres.Sql {
  const { url, ...socket } = postgresJsConnection(options.url);
  return postgres(url, {
    ...socket,
    max: options.poolSize,
    // postgres.js waits 30 s for a connection by default: far past a gateway's patience. A short
    // timeout turns an unreachable database into a prompt 503 the gateway will retry.
    connect_timeout: options.connectTimeoutSeconds,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    onnotice: () => {},
    prepare: options.preparedStatements ?? true,
    // Behind a transaction pooler, no pipelining: postgres.js sends a parameterised statement's
    // Parse/Describe/Flush while the connection's previous statement still waits for its
    // ReadyForQuery; PgBouncer (1.18 here; pgbouncer/pgbouncer#759) hands the server back to the
    // pool at that ReadyForQuery, the Describe's answer goes nowhere ("got packet '1' from server
    // when not linked") and the statement waits forever. 0 = the next statement waits for the last.
    ...(options.preparedStatements === false && { max_pipeline: 0 }),
    connection: { application_name: options.applicationName },
    types: JSON_TYPES,
  });
}

export function connectDatabase(options: DatabaseOptions): DatabaseHandle {
  const sql = connectPool(options);
  const db = drizzle(sql, { schema });
  return {
    db,
    sql,
    close: () => sql.end({ timeout: 5 }),
  };
}
