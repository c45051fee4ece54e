import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';

/**
 * pg-boss's fetch is planned from the job table's statistics. Planned from statistics that saw no
 * queued jobs (a new install, a table of completed jobs) while thousands wait, it reads every
 * queued job, compares each with every active singleton and sorts them all on every fetch: 175 ms
 * per fetch of 100 against 2.9 ms once analyzed on a 50,000-job backlog after an outage, and
 * 98 ms on average (432 ms at worst, 15,889 queued jobs each compared with 100 active ones) for
 * the webhooks fetch while the forwarding bench's backlog built up within seconds (auto_explain,
 * bench/README.md). Autovacuum alone comes too late for a backlog that appears at once: it
 * looks once per `autovacuum_naptime` (1 min by default).
 */
const ANALYZE_AFTER_CHANGED_ROWS = 5_000;

/**
 * At most one ANALYZE per this long, whoever ran the last (any instance, autovacuum: pg_stat's
 * last_analyze and last_autoanalyze). One look at a growing backlog is what moves the fetch off the
 * bad plan; analyzing every 2 s under steady ingest cost the single container 5–17% more
 * PostgreSQL CPU per webhook request and, with INGEST_FIRST=off, its p99 ack at 1,000 req/s (100 ms against
 * 57 ms: bench/README.md#where-the-time-goes).
 */
const MIN_SECONDS_BETWEEN_ANALYZES = 30;

/** The queue's job table as a qualified name, with its storage options. */
async function jobTableOf(boss: PgBoss, queue: string): Promise<{ name: string; options: string[] } | undefined> {
  const { rows } = await boss.getDb().executeSql(
    `select c.oid::regclass::text as name, coalesce(c.reloptions, '{}') as options
     from pgboss.queue q join pg_class c on c.relname = q.table_name
     join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'pgboss'
     where q.name = $1`,
    [queue],
  );
  return rows[0] as { name: string; options: string[] } | undefined;
}

/**
 * Autovacuum re-analyzes the job table every 5,000 changed rows rather than its default 10% of a
 * table of days of retained jobs, which could leave a whole backlog drain on the bad plan. The
 * backstop for instances that run no analyzer (receivers only). Idempotent, and a no-op when
 * already set: many instances start against one database.
 */
export async function askAutovacuumToAnalyzeOften(boss: PgBoss, queue: string): Promise<void> {
  const table = await jobTableOf(boss, queue);
  const wanted = [`autovacuum_analyze_scale_factor=0`, `autovacuum_analyze_threshold=${ANALYZE_AFTER_CHANGED_ROWS}`];
  if (!table || wanted.every((option) => table.options.includes(option))) return;
  await boss.getDb().executeSql(`alter table ${table.name} set (${wanted.join(', ')})`);
}

export interface JobTableAnalyzer {
  /** One look now: analyzes if enough rows changed. Resolves true if it analyzed. */
  check(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * How often a worker instance looks: one read of pg_stat_user_tables, so a backlog that builds up
 * within seconds is on the good plan within a few seconds more.
 */
const CHECK_INTERVAL_MS = 2_000;

/**
 * Every `intervalMs` a worker instance reads how many rows of the job table changed since it was
 * last analyzed (pg_stat_user_tables, kept by PostgreSQL whoever analyzed) and, past 5,000 and if
 * nobody analyzed it in the last 30 s, analyzes it itself. SKIP_LOCKED: if another instance (or
 * autovacuum) is analyzing it right now, that one is enough; afterwards the count starts again
 * from zero for every instance.
 */
export async function startJobTableAnalyzer(options: {
  boss: PgBoss;
  queue: string;
  logger: Logger;
  /** Tests only: how often to look, and the floor between two ANALYZEs (defaults 2 s and 30 s). */
  intervalMs?: number;
  minSecondsBetweenAnalyzes?: number;
}): Promise<JobTableAnalyzer> {
  const intervalMs = options.intervalMs ?? CHECK_INTERVAL_MS;
  const minSeconds = options.minSecondsBetweenAnalyzes ?? MIN_SECONDS_BETWEEN_ANALYZES;
  const table = await jobTableOf(options.boss, options.queue);
  const db = options.boss.getDb();
  let stopped = false;
  let running: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function analyzeIfStale(): Promise<boolean> {
    if (!table) return false;
    const { rows } = await db.executeSql(
      `select n_mod_since_analyze::float8 as changed,
         coalesce(greatest(last_analyze, last_autoanalyze) > now() - make_interval(secs => $2), false) as analyzed_lately
       from pg_stat_user_tables where relid = $1::regclass`,
      [table.name, minSeconds],
    );
    const stats = rows[0] as { changed: number; analyzed_lately: boolean } | undefined;
    if (!stats || stats.changed < ANALYZE_AFTER_CHANGED_ROWS || stats.analyzed_lately) return false;
    const started = performance.now();
    // Every column: only a whole-table ANALYZE resets n_mod_since_analyze, the count every instance
    // reads (35 ms against 22 ms for the fetch's columns alone, at 8,500 jobs).
    await db.executeSql(`analyze (skip_locked) ${table.name}`);
    options.logger.debug({ table: table.name, changed: stats.changed, ms: Math.round(performance.now() - started) }, 'job table analyzed for the fetch plan');
    return true;
  }

  const check = () => {
    running ??= analyzeIfStale().finally(() => {
      running = undefined;
    });
    return running;
  };
  const schedule = () => {
    timer = setTimeout(() => {
      check()
        .catch((error: unknown) =>
          options.logger.warn({ err: error }, `job table statistics check failed (tried again in ${intervalMs} ms): ${describeError(error)}`),
        )
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return {
    check,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
