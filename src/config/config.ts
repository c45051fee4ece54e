import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { builtInDrivers } from '../providers/registry.ts';
import type { ProviderDriver } from '../providers/types.ts';
import { type DashboardConfig, dashboardConfig, dashboardEnvKeys } from './dashboard-config.ts';
import { type DestinationConfig, loadDestinations } from './destinations-config.ts';
import { type DeclaredRefetch, type ProviderRefetchConfig, refetchFileKeys, resolveRefetchConfig } from '../refetch/settings.ts';

/** One configured provider: its driver plus the inbox's own per-provider settings. */
export interface ConfiguredProvider {
  name: string;
  driver: ProviderDriver;
  /** How long stored events (and so their dedupe keys) are kept; never shorter than the gateway's resend window. */
  retentionDays: number;
  /** The gateway's own resend window: a purge inside it would let a late resend pass as new. */
  resendWindowDays: number;
  /** `create`: the first event seen for a charge creates the payment. `require`: the app creates it; events wait. */
  unknownPayment: 'create' | 'require';
  /** Per canonical kind: order by occurred_at or re-read the charge from the gateway API (src/refetch/settings.ts). */
  refetch: ProviderRefetchConfig;
}

export type ProcessRole = 'all' | 'receiver' | 'worker';

export interface AppConfig {
  port: number;
  host: string;
  /** Undefined: start an embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  role: ProcessRole;
  logLevel: string;
  maxBodyBytes: number;
  /** How long a delivery may wait for its COMMIT before it gets 503 (gateways give up at ~10 s). */
  commitDeadlineMs: number;
  databaseConnectTimeoutSeconds: number;
  databasePoolSize: number;
  worker: WorkerConfig;
  providers: ReadonlyMap<string, ConfiguredProvider>;
  /** How often the database-derived metrics (inbox counts, oldest pending, queue depth) are recounted. */
  metricsRefreshSeconds: number;
  dashboard: DashboardConfig;
  operations: OperationsConfig;
  /** Where payment events are pushed (src/config/destinations-config.ts). */
  destinations: readonly DestinationConfig[];
}

/** The background cron jobs (sweeper, retention) and where retention archives. */
export interface OperationsConfig {
  /** 5-field cron (UTC) of the sweep that re-queues pending events whose job was lost. */
  sweepCron: string;
  /** A pending row older than this with no live job counts as lost. */
  sweepPendingOlderThanSeconds: number;
  /** Most rows one sweep re-queues (oldest first). */
  sweepBatchSize: number;
  /** 5-field cron (UTC) of the daily retention run (archive, then delete, past each provider's window). */
  retentionCron: string;
  /** Rows per retention transaction: small, so no lock is held for long. */
  retentionBatchSize: number;
  /** Where retention writes its gzip JSON Lines archives. */
  archiveDir: string;
}

export type { DashboardConfig } from './dashboard-config.ts';

export interface WorkerConfig {
  /** Attempts in all (pg-boss retryLimit + 1). */
  maxAttempts: number;
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** A job active longer than this is retried, so it must exceed any handler's worst case. */
  expireInSeconds: number;
  /**
   * A running job's worker refreshes its heartbeat every half of this; a job whose heartbeat is
   * this stale (its worker died: kill -9, OOM, lost node) is retried without waiting for expiry.
   * Undefined: no heartbeat, expiry alone finds a dead worker.
   */
  heartbeatSeconds: number | undefined;
  batchSize: number;
  concurrency: number;
  pollingIntervalSeconds: number;
  shutdownTimeoutMs: number;
}

const intFromEnv = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const envSchema = z.object({
  PORT: intFromEnv(3000, 0, 65535),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  INBOX_DATA_DIR: z.string().min(1).default('.inbox'),
  INBOX_ROLE: z.enum(['all', 'receiver', 'worker']).default('all'),
  INBOX_CONFIG: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_BODY_BYTES: intFromEnv(1024 * 1024, 1),
  SIGNATURE_TOLERANCE_SECONDS: intFromEnv(300, 1),
  COMMIT_DEADLINE_MS: intFromEnv(5000, 100, 60_000),
  DATABASE_CONNECT_TIMEOUT_SECONDS: intFromEnv(2, 1, 60),
  DATABASE_POOL_SIZE: intFromEnv(10, 2, 200),
  WORKER_MAX_ATTEMPTS: intFromEnv(10, 1, 100),
  WORKER_RETRY_DELAY_SECONDS: intFromEnv(10, 1),
  WORKER_RETRY_DELAY_MAX_SECONDS: intFromEnv(900, 1),
  WORKER_EXPIRE_IN_SECONDS: intFromEnv(300, 10, 86_400),
  // No zod default: the default depends on WORKER_EXPIRE_IN_SECONDS (workerHeartbeatSeconds).
  WORKER_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(86_400).optional(),
  WORKER_BATCH_SIZE: intFromEnv(100, 1, 500),
  WORKER_CONCURRENCY: intFromEnv(2, 1, 64),
  WORKER_POLLING_INTERVAL_SECONDS: z.coerce.number().min(0.5).default(2),
  SHUTDOWN_TIMEOUT_MS: intFromEnv(25_000, 0),
  INBOX_RETENTION_DAYS: intFromEnv(30, 1),
  METRICS_REFRESH_SECONDS: intFromEnv(15, 1, 3600),
  ...dashboardEnvKeys,
  SWEEP_CRON: z.string().regex(/^\S+( \S+){4}$/, 'must be a 5-field cron expression').default('*/5 * * * *'),
  SWEEP_PENDING_OLDER_THAN_SECONDS: intFromEnv(300, 1),
  SWEEP_BATCH_SIZE: intFromEnv(500, 1, 10_000),
  RETENTION_CRON: z.string().regex(/^\S+( \S+){4}$/, 'must be a 5-field cron expression').default('15 3 * * *'),
  RETENTION_BATCH_SIZE: intFromEnv(500, 1, 10_000),
  INBOX_ARCHIVE_DIR: z.string().min(1).optional(),
});

const DEFAULT_HEARTBEAT_SECONDS = 30;

/**
 * The default applies only where it finds a dead worker sooner than expiry does: with an expiry of
 * 30 s or less, expiry is already as fast, and a configuration that was valid before this setting
 * existed still starts. An explicit value must be below the expiry (checked in loadConfig).
 */
function workerHeartbeatSeconds(e: z.infer<typeof envSchema>): number | undefined {
  if (e.WORKER_HEARTBEAT_SECONDS !== undefined) return e.WORKER_HEARTBEAT_SECONDS;
  return e.WORKER_EXPIRE_IN_SECONDS > DEFAULT_HEARTBEAT_SECONDS ? DEFAULT_HEARTBEAT_SECONDS : undefined;
}

const providerNamePattern = /^[a-z0-9][a-z0-9-]{0,29}$/;

const fileSchema = z.object({
  providers: z
    .record(
      z.string().regex(providerNamePattern, 'provider names are lower-case letters, digits and dashes, at most 30'),
      z.looseObject({
        driver: z.string().min(1),
        secrets: z.array(z.string().min(1)).optional(),
        retentionDays: z.number().int().positive().optional(),
        unknownPayment: z.enum(['create', 'require']).optional(),
        ...refetchFileKeys,
      }),
    )
    .default({}),
});

const SECRET_PREFIX = 'WEBHOOK_SECRET_';

/** `WEBHOOK_SECRET_STRIPE_BR` belongs to the provider `stripe-br`. */
export function secretEnvName(provider: string): string {
  return SECRET_PREFIX + provider.toUpperCase().replaceAll('-', '_');
}

function splitSecrets(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

function formatIssues(error: z.ZodError, prefix: string): string[] {
  return error.issues.map((issue) => `${prefix}${issue.path.join('.')}: ${issue.message}`);
}

type Env = Record<string, string | undefined>;
type EnvValues = z.infer<typeof envSchema>;

/**
 * Each variable parsed on its own, so one bad value does not hide the checks that need the others
 * (PORT=abc must not keep INBOX_RETENTION_DAYS=2 from being refused in the same run).
 */
function parseEachVariable(env: Env, problems: string[]): Partial<EnvValues> {
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(envSchema.shape)) {
    const result = schema.safeParse(env[name]);
    if (result.success) values[name] = result.data;
    else problems.push(...result.error.issues.map((issue) => `${name}: ${issue.message}`));
  }
  return values as Partial<EnvValues>;
}
export type ReadFile = (path: string) => string;

interface DeclaredProvider {
  driver: string;
  secrets: string[];
  retentionDays?: number;
  unknownPayment?: 'create' | 'require';
  /** `api`, `ordering`, `ratePerSecond`: the refetch strategy's keys. */
  refetch: DeclaredRefetch;
  /** What is left for the driver's own schema. */
  options: Record<string, unknown>;
}

function declaredProviders(env: Env, readFile: ReadFile, problems: string[]): Map<string, DeclaredProvider> {
  const declared = new Map<string, DeclaredProvider>();
  const path = env.INBOX_CONFIG;
  if (path) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFile(path));
    } catch (error) {
      problems.push(`INBOX_CONFIG: cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    const file = fileSchema.safeParse(parsed ?? {});
    if (!file.success) problems.push(...formatIssues(file.error, `INBOX_CONFIG ${path}: `));
    else {
      for (const [name, { driver, secrets, retentionDays, unknownPayment, api, ordering, ratePerSecond, ...options }] of Object.entries(file.data.providers)) {
        declared.set(name, { driver, secrets: secrets ?? [], retentionDays, unknownPayment, refetch: { api, ordering, ratePerSecond }, options });
      }
    }
  }
  // Zero-config: a secret for a name that is not declared enables the built-in driver of that name.
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith(SECRET_PREFIX) || value === undefined) continue;
    const name = key.slice(SECRET_PREFIX.length).toLowerCase().replaceAll('_', '-');
    const provider = declared.get(name);
    if (provider) provider.secrets.push(...splitSecrets(value));
    else if (providerNamePattern.test(name)) declared.set(name, { driver: name, secrets: splitSecrets(value), refetch: {}, options: {} });
    else problems.push(`${key}: "${name}" is not a valid provider name`);
  }
  return declared;
}

interface ProviderDefaults {
  toleranceSeconds: number;
  retentionDays: number;
}

function createProviders(env: Env, readFile: ReadFile, defaults: ProviderDefaults, problems: string[]) {
  const providers = new Map<string, ConfiguredProvider>();
  for (const [name, declared] of declaredProviders(env, readFile, problems)) {
    const definition = builtInDrivers[declared.driver];
    if (!definition) {
      problems.push(`provider "${name}": unknown driver "${declared.driver}" (built-in drivers: ${Object.keys(builtInDrivers).join(', ')})`);
      continue;
    }
    if (definition.requiresSecret && declared.secrets.length === 0) {
      problems.push(`provider "${name}": no secret; set ${secretEnvName(name)} (comma-separated for rotation)`);
      continue;
    }
    const retentionDays = declared.retentionDays ?? defaults.retentionDays;
    const resendWindowDays = definition.resendWindowDays;
    if (retentionDays <= resendWindowDays) {
      problems.push(
        `provider "${name}": retention of ${retentionDays} days does not outlive the gateway's ${resendWindowDays}-day resend window; a late resend would pass as a new event`,
      );
      continue;
    }
    try {
      const driver = definition.create({ name, secrets: declared.secrets, signatureToleranceSeconds: defaults.toleranceSeconds, options: declared.options });
      const refetch = resolveRefetchConfig({ provider: name, driver: declared.driver, declared: declared.refetch, env }, problems);
      providers.set(name, { name, driver, retentionDays, resendWindowDays, unknownPayment: declared.unknownPayment ?? 'create', refetch });
    } catch (error) {
      if (error instanceof ConfigError) problems.push(...error.problems.map((p) => `provider "${name}": ${p}`));
      else throw error;
    }
  }
  return providers;
}

/**
 * Reads the whole configuration once, at start. Pure apart from `readFile`: every problem is
 * collected and thrown together as one ConfigError, so a bad deploy is fixed in one round.
 */
export function loadConfig(env: Env, readFile: ReadFile): AppConfig {
  const problems: string[] = [];
  const values = parseEachVariable(env, problems);
  const providers = createProviders(
    env,
    readFile,
    { toleranceSeconds: values.SIGNATURE_TOLERANCE_SECONDS ?? 300, retentionDays: values.INBOX_RETENTION_DAYS ?? 30 },
    problems,
  );
  const { WORKER_RETRY_DELAY_SECONDS: retryDelay, WORKER_RETRY_DELAY_MAX_SECONDS: retryDelayMax, WORKER_HEARTBEAT_SECONDS: heartbeat, WORKER_EXPIRE_IN_SECONDS: expiry } = values;
  if (retryDelay !== undefined && retryDelayMax !== undefined && retryDelayMax < retryDelay) {
    problems.push('WORKER_RETRY_DELAY_MAX_SECONDS: must be at least WORKER_RETRY_DELAY_SECONDS');
  }
  if (heartbeat !== undefined && expiry !== undefined && heartbeat >= expiry) {
    problems.push(`WORKER_HEARTBEAT_SECONDS: must be less than WORKER_EXPIRE_IN_SECONDS (${expiry}); otherwise expiry always finds a dead worker first`);
  }
  const destinations = loadDestinations(env, readFile, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  // Every variable parsed: the values are whole.
  const e = values as EnvValues;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.INBOX_DATA_DIR,
    role: e.INBOX_ROLE,
    logLevel: e.LOG_LEVEL,
    maxBodyBytes: e.MAX_BODY_BYTES,
    commitDeadlineMs: e.COMMIT_DEADLINE_MS,
    databaseConnectTimeoutSeconds: e.DATABASE_CONNECT_TIMEOUT_SECONDS,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    worker: {
      maxAttempts: e.WORKER_MAX_ATTEMPTS,
      retryDelaySeconds: e.WORKER_RETRY_DELAY_SECONDS,
      retryDelayMaxSeconds: e.WORKER_RETRY_DELAY_MAX_SECONDS,
      expireInSeconds: e.WORKER_EXPIRE_IN_SECONDS,
      heartbeatSeconds: workerHeartbeatSeconds(e),
      batchSize: e.WORKER_BATCH_SIZE,
      concurrency: e.WORKER_CONCURRENCY,
      pollingIntervalSeconds: e.WORKER_POLLING_INTERVAL_SECONDS,
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    },
    providers,
    metricsRefreshSeconds: e.METRICS_REFRESH_SECONDS,
    dashboard: dashboardConfig(e),
    destinations,
    operations: {
      sweepCron: e.SWEEP_CRON,
      sweepPendingOlderThanSeconds: e.SWEEP_PENDING_OLDER_THAN_SECONDS,
      sweepBatchSize: e.SWEEP_BATCH_SIZE,
      retentionCron: e.RETENTION_CRON,
      retentionBatchSize: e.RETENTION_BATCH_SIZE,
      archiveDir: e.INBOX_ARCHIVE_DIR ?? `${e.INBOX_DATA_DIR}/archive`,
    },
  };
}
