import { z } from 'zod';
import { apiEnvKeys } from './api-config.ts';
import { dashboardEnvKeys } from './dashboard-config.ts';
import { databaseEnvKeys, postgresUrl } from './database-config.ts';
import { ingestFirstEnvKeys } from './ingest-first-config.ts';

const intFromEnv = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(fallback);

const cron = (fallback: string) =>
  z
    .string()
    .regex(/^\S+( \S+){4}$/, 'must be a 5-field cron expression')
    .default(fallback);

/**
 * Every variable with its meaning beside it (`.describe`, or `.meta` with `whenUnset` where no zod
 * default says what unset means): `npm run docs:config` renders them into docs/configuration.md.
 * The meanings are Markdown, their links relative to docs/.
 */
export const envVariables = z.object({
  PORT: intFromEnv(3000, 0, 65535).describe('Where the receiver listens: the port.'),
  HOST: z.string().min(1).default('0.0.0.0').describe('Where the receiver listens: the address.'),
  DATABASE_URL: postgresUrl.optional().meta({
    whenUnset: 'unset → embedded',
    description:
      "`postgres://user[:password]@host[:port]/database[?sslmode=…]`: the user, the host and the database must be named (no libpq defaults from the OS user), the port be 1–65535, `sslmode` one of `disable`, `allow`, `prefer`, `require`, `verify-ca`, `verify-full`, `no-verify`, and special characters in the password percent-encoded. A unix socket in libpq's form: `postgres://user@localhost:5432/db?host=/run/postgresql` (a local server, Cloud SQL's proxy socket). Unset: embedded PostgreSQL under `INBOX_DATA_DIR`.",
  }),
  INBOX_DATA_DIR: z
    .string()
    .min(1)
    .default('.inbox')
    .describe("Embedded PostgreSQL's data (`.inbox/pg`, or where `.inbox/embedded-postgres.json` says: see [Getting started](getting-started.md))."),
  INBOX_ROLE: z
    .enum(['all', 'receiver', 'worker'])
    .default('all')
    .describe(
      '`all` (receiver + workers, single container), `receiver`, or `worker`. Every role listens on `PORT`; `worker` serves only `/metrics`, health checks and the dashboard.',
    ),
  INBOX_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Path of a JSON file declaring more providers and destinations' options ([its keys](#inbox_config-keys); [Destinations](destinations.md)). Its top-level keys are `providers` and `destinations`; any other is a configuration error naming it.",
    ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino level.'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional().meta({
    whenUnset: 'JSON, or pretty on a terminal',
    description:
      '`json`: one JSON object per line (what log shippers read). `pretty`: one readable line per entry, printed by `pino-pretty`, a devDependency (a production install, the Docker image, refuses it in one line). Unset: pretty when stdout is a terminal and `pino-pretty` is installed, else JSON.',
  }),
  MAX_BODY_BYTES: intFromEnv(1024 * 1024, 1).describe('Larger bodies get 413 without being buffered.'),
  SIGNATURE_TOLERANCE_SECONDS: intFromEnv(300, 1).describe('Signed-timestamp tolerance, both directions, where the scheme has a timestamp.'),
  COMMIT_DEADLINE_MS: intFromEnv(5000, 100, 60_000).describe('A webhook request not committed by then gets 503 + `Retry-After` (gateways time out at ~10 s).'),
  // Unset: 4 ms in the receiver role; none where workers share the event loop (see commitLingerMs).
  INGEST_LINGER_MS: z.coerce.number().int().min(0).max(50).optional().meta({
    whenUnset: '`4` in `receiver`, `0` in `all`',
    description:
      "The longest a webhook request that finds the commit slot free waits for others to share its commit, while that pays (see [The receiver](receiving.md), group commit). `0`: never. At most 50. Off by default in `all`, where it measured worse for the ack's p99.",
  }),
  DATABASE_CONNECT_TIMEOUT_SECONDS: intFromEnv(2, 1, 60).describe('postgres.js waits 30 s by default; a short timeout turns an outage into a prompt 503.'),
  DATABASE_POOL_SIZE: intFromEnv(10, 2, 200).describe(
    'postgres.js pool; pg-boss keeps its own, half this size (at least 4); a receiving instance (`all`, `receiver`) opens one more connection of its own for the group commit.',
  ),
  WORKER_MAX_ATTEMPTS: intFromEnv(10, 1, 100).describe('Attempts in all (pg-boss `retryLimit` + 1).'),
  WORKER_RETRY_DELAY_SECONDS: intFromEnv(10, 1).describe("The first retry's delay; each further one doubles it, with jitter ([Processing](processing.md))."),
  WORKER_RETRY_DELAY_MAX_SECONDS: intFromEnv(900, 1).describe('The longest delay between two attempts ([Processing](processing.md)).'),
  WORKER_EXPIRE_IN_SECONDS: intFromEnv(300, 10, 86_400).describe(
    "A job active longer is retried while it may still run: keep it far above any handler's worst case.",
  ),
  // No zod default: the default depends on WORKER_EXPIRE_IN_SECONDS (workerHeartbeatSeconds).
  WORKER_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(86_400).optional().meta({
    whenUnset: '`30`',
    description:
      "A running job's worker refreshes its heartbeat every half of this; when the worker dies (kill -9, OOM, lost node) its jobs are retried once the heartbeat is this stale, found by any worker instance within about 5 s more, instead of after the expiry. 10 or more, below `WORKER_EXPIRE_IN_SECONDS`; by default off when that is 30 or less. Applies to jobs queued after it is set.",
  }),
  WORKER_BATCH_SIZE: intFromEnv(100, 1, 500).describe('Most jobs per fetch (a fetched batch shares one transaction).'),
  WORKER_CONCURRENCY: intFromEnv(2, 1, 64).describe('Workers per instance.'),
  WORKER_POLLING_INTERVAL_SECONDS: z.coerce.number().min(0.5).default(2).describe('Sleep between fetches when idle.'),
  SHUTDOWN_TIMEOUT_MS: intFromEnv(25_000, 0).describe('How long `SIGTERM` waits for jobs in flight.'),
  INBOX_RETENTION_DAYS: intFromEnv(30, 1).describe(
    "How long payloads (`webhook_inbox` rows) are kept; `retentionDays` per provider in `INBOX_CONFIG` wins. Must exceed the gateway's resend window. See [Retention](operations.md#retention-archives-and-the-dedupe-window).",
  ),
  INBOX_KEY_RETENTION_DAYS: intFromEnv(400, 1).describe(
    "How long dedupe keys (`webhook_event_keys`) are kept; `keyRetentionDays` per provider in `INBOX_CONFIG` wins. At least the provider's `retentionDays`.",
  ),
  METRICS_REFRESH_SECONDS: intFromEnv(15, 1, 3600).describe('How often the database-derived gauges of `/metrics` are recounted (never per scrape).'),
  ...dashboardEnvKeys,
  ...databaseEnvKeys,
  ...apiEnvKeys,
  ...ingestFirstEnvKeys,
  SWEEP_CRON: cron('*/5 * * * *').describe(
    'When the sweeper runs (5-field cron, UTC; pg-boss `schedule`, one run per tick across instances). See [Operations](operations.md).',
  ),
  SWEEP_PENDING_OLDER_THAN_SECONDS: intFromEnv(300, 1).describe('A `pending` row older than this with no live job is re-queued by the sweeper.'),
  SWEEP_BATCH_SIZE: intFromEnv(500, 1, 10_000).describe('Most rows one sweep re-queues, oldest first.'),
  RETENTION_CRON: cron('15 3 * * *').describe("When the daily retention run archives and deletes rows past each provider's `retentionDays` (UTC)."),
  RETENTION_BATCH_SIZE: intFromEnv(500, 1, 10_000).describe('Rows per retention transaction (small, so no lock is held for long).'),
  INBOX_ARCHIVE_DIR: z.string().min(1).optional().meta({
    whenUnset: '`<INBOX_DATA_DIR>/archive`',
    description: 'Where retention and `inboxctl purge` write their gzip JSON Lines archives. In a container, a mounted volume the `node` user can write.',
  }),
  RECONCILE_CRON: cron('45 4 * * *').describe(
    "When the daily reconciliation reads each provider's ledger, then each of its accounts' on their behalf, and records findings (UTC). See [Reconciliation](reconciliation.md).",
  ),
  RECONCILE_WINDOW_DAYS: z.coerce.number().int().min(1).max(90).default(7).describe('How many days back each cron reconciliation reads (1–90).'),
  RECONCILE_PAYOUTS_CRON: cron('*/15 * * * *').describe(
    'When the payouts a `payout.*` webhook announced since their entries were last read are reconciled (UTC).',
  ),
});
