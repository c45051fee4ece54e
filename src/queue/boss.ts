import { type ConstructorOptions, PgBoss } from 'pg-boss';
import { NamedStatementsClient } from './named-statements-client.ts';
import type { Logger } from 'pino';
import type { ProcessRole, WorkerConfig } from '../config/config.ts';
import { ensureQueues } from './queues.ts';
import { collapseRepeatedErrors } from './repeated-errors.ts';

export interface BossOptions {
  url: string;
  role: ProcessRole;
  worker: WorkerConfig;
  poolSize: number;
  connectTimeoutSeconds: number;
  logger: Logger;
  /**
   * DATABASE_LISTEN_NOTIFY (default true). False: workers poll every pollingIntervalSeconds and the
   * queue's inserts send no NOTIFY. Behind a transaction pooler LISTEN cannot work: pg-boss would
   * register it on a pooled server connection, lose it, warn and reconnect every heartbeat.
   */
  listenNotify?: boolean;
  /**
   * DATABASE_PREPARED_STATEMENTS (default true): pg-boss's statements go named and prepared
   * (named-statements-client.ts). False behind a pooler that does not carry them.
   */
  preparedStatements?: boolean;
}

/**
 * How often a supervising instance (every role but receiver) looks for jobs whose worker died.
 * pg-boss fails a job with a stale heartbeat (or past its expiry) only in the monitor step of a
 * supervise pass, and only when that pass claims the queue's monitor slot, which comes due every
 * monitorIntervalSeconds: a dead worker's job is failed (and retried after its backoff) within
 * heartbeat + 5 s (heartbeat + 10 s at worst: the slot, then another instance's tick); pg-boss's
 * defaults (60 s each) add up to two minutes. 5 s is also pg-boss's own flow-poll cadence.
 * The price is a handful of small statements per tick and per instance; the monitor work itself
 * runs once per slot for the whole deployment (docs/decisions/011-pg-boss-supervision-every-5-s.md).
 */
const SUPERVISE_INTERVAL_SECONDS = 5;

/** The same kind of pg-boss background error is logged at most once in this long (`repeated`: how many were not). */
const REPEATED_ERROR_INTERVAL_MS = 30_000;

/** pg-boss's schema, named rather than left to its default: the receiver's ingest statement writes into it (embedded-job-insert.ts). */
export const BOSS_SCHEMA = 'pgboss';

/**
 * pg-boss keeps its own schema (`pgboss`, migrated by pg-boss under its own advisory lock) and its
 * own small node-postgres pool. Receiver-only instances skip maintenance and cron: those belong to
 * the instances that run workers.
 */
export async function startBoss(options: BossOptions): Promise<PgBoss> {
  const runsBackgroundWork = options.role !== 'receiver';
  const listenNotify = options.listenNotify ?? true;
  const create = () => {
    const boss = new PgBoss({
      connectionString: options.url,
      schema: BOSS_SCHEMA,
      max: options.poolSize,
      connectionTimeoutMillis: options.connectTimeoutSeconds * 1000,
      application_name: 'webhook-inbox:pg-boss',
      useListenNotify: runsBackgroundWork && listenNotify,
      supervise: runsBackgroundWork,
      superviseIntervalSeconds: SUPERVISE_INTERVAL_SECONDS,
      monitorIntervalSeconds: SUPERVISE_INTERVAL_SECONDS,
      schedule: runsBackgroundWork,
      // Not in pg-boss's option types: handed on to node-postgres's Pool, which takes it.
      ...((options.preparedStatements ?? true) && { Client: NamedStatementsClient }),
    } as ConstructorOptions);
    // pg-boss reports background failures as events; without a listener they would be thrown away.
    // An outage repeats the same one several times a second: collapsed, one line per kind per interval.
    boss.on(
      'error',
      collapseRepeatedErrors({
        intervalMs: REPEATED_ERROR_INTERVAL_MS,
        now: () => performance.now(),
        log: (error, repeated) => options.logger.error({ err: error, ...(repeated > 0 && { repeated }) }, 'pg-boss background error'),
      }),
    );
    boss.on('warning', (warning) => options.logger.warn({ warning }, 'pg-boss warning'));
    return boss;
  };
  const boss = await startRetryingInstallRace(create, options.logger);
  await ensureQueues(boss, options.worker, listenNotify);
  return boss;
}

const UNIQUE_VIOLATION = '23505';
const INSTALL_ATTEMPTS = 3;

/**
 * pg-boss installs its schema under a transaction-scoped advisory lock and treats "already exists"
 * from the loser of a race as success. Seen with two instances starting at once on an empty
 * database through PgBouncer (test/db/transaction-pooler.system.test.ts): the second one's install, once it
 * had the lock, still failed with a unique violation on pg_namespace — its session's catalog cache
 * had not yet seen the first one's commit, so CREATE SCHEMA IF NOT EXISTS tried to insert — and
 * pg-boss let that through as a failed start. A fresh start runs in a new transaction, which sees
 * the installed schema and skips the install.
 */
async function startRetryingInstallRace(create: () => PgBoss, logger: Logger): Promise<PgBoss> {
  for (let attempt = 1; ; attempt += 1) {
    const boss = create();
    try {
      await boss.start();
      return boss;
    } catch (error) {
      await boss.stop({ graceful: false, close: true }).catch(() => {});
      if (attempt >= INSTALL_ATTEMPTS || (error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      logger.info({ attempt }, 'another instance installed pg-boss at the same moment: starting again');
    }
  }
}
