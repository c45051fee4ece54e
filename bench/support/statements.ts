import type postgres from 'postgres';

export interface StatementCost {
  query: string;
  calls: number;
  /** Times PostgreSQL planned it: a prepared statement that runs on a cached plan is planned far fewer times than it is called. */
  plans: number;
  /** Planning and execution. */
  totalMs: number;
  planMs: number;
  meanMs: number;
  rows: number;
}

export interface StatementProfile {
  /** Statements executed, all kinds (BEGIN/COMMIT included). */
  calls: number;
  /** Time PostgreSQL spent planning and executing them (not waiting on the client or on fsync of COMMIT). */
  totalMs: number;
  /** Of which planning (pg_stat_statements.track_planning, on in the bench's own cluster; 0 where it is off). */
  planMs: number;
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
    const rows = await sql<{ query: string; calls: string; plans: string; total: number; plan: number; rows: string }[]>`
      select query, calls, plans, total_plan_time + total_exec_time as total, total_plan_time as plan, rows from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database())
        and query not like '%pg_stat_statements%'
      order by total_plan_time + total_exec_time desc`;
    const calls = rows.reduce((a, r) => a + Number(r.calls), 0);
    const totalMs = rows.reduce((a, r) => a + r.total, 0);
    const planMs = rows.reduce((a, r) => a + r.plan, 0);
    return {
      calls,
      totalMs,
      planMs,
      top: rows.slice(0, top).map((r) => ({
        query: r.query.replace(/\s+/g, ' ').slice(0, 160),
        calls: Number(r.calls),
        plans: Number(r.plans),
        totalMs: Math.round(r.total),
        planMs: Math.round(r.plan),
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
  const us = (ms: number) => ((ms / per) * 1000).toFixed(0);
  log(
    `    PostgreSQL: ${(statements.calls / per).toFixed(1)} statements and ${us(statements.totalMs)} µs of planning and execution per ${unit} (${us(statements.planMs)} µs planning); top by total time:`,
  );
  for (const st of statements.top)
    log(
      `      ${String(st.totalMs).padStart(7)} ms (${st.planMs} ms planning, ${st.plans} plans) ${String(st.calls).padStart(7)} × ${st.meanMs} ms  ${st.query}`,
    );
}
