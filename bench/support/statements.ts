import type postgres from 'postgres';

export interface StatementCost {
  query: string;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
}

export interface StatementProfile {
  /** Statements executed, all kinds (BEGIN/COMMIT included). */
  calls: number;
  /** Time PostgreSQL spent executing them (not waiting on the client or on fsync of COMMIT). */
  totalMs: number;
  top: StatementCost[];
}

/**
 * The database side of "where the time goes", from pg_stat_statements (loaded by the bench's own
 * cluster; on BENCH_DATABASE_URL it may be missing, and then this reports nothing).
 */
export async function resetStatements(sql: postgres.Sql): Promise<boolean> {
  try {
    await sql`create extension if not exists pg_stat_statements`;
    await sql`select pg_stat_statements_reset()`;
    return true;
  } catch {
    return false;
  }
}

export async function readStatements(sql: postgres.Sql, top = 8): Promise<StatementProfile | undefined> {
  try {
    const rows = await sql<{ query: string; calls: string; total: number; rows: string }[]>`
      select query, calls, total_exec_time as total, rows from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database())
        and query not like '%pg_stat_statements%'
      order by total_exec_time desc`;
    const calls = rows.reduce((a, r) => a + Number(r.calls), 0);
    const totalMs = rows.reduce((a, r) => a + r.total, 0);
    return {
      calls,
      totalMs,
      top: rows.slice(0, top).map((r) => ({
        query: r.query.replace(/\s+/g, ' ').slice(0, 160),
        calls: Number(r.calls),
        totalMs: Math.round(r.total),
        meanMs: Number((r.total / Number(r.calls)).toFixed(3)),
        rows: Number(r.rows),
      })),
    };
  } catch {
    return undefined;
  }
}

/** The profile as log lines: statements and execution per `unit` (event, delivered event), then the top statements by total time. */
export function logStatements(log: (line: string) => void, statements: StatementProfile, events: number, unit: string): void {
  const per = Math.max(1, events);
  log(`    PostgreSQL: ${(statements.calls / per).toFixed(1)} statements and ${((statements.totalMs / per) * 1000).toFixed(0)} µs of execution per ${unit}; top by total time:`);
  for (const st of statements.top) log(`      ${String(st.totalMs).padStart(7)} ms ${String(st.calls).padStart(7)} × ${st.meanMs} ms  ${st.query}`);
}
