import { z } from 'zod';
import { type ApiConfig, apiConfig } from './api-config.ts';
import { type DashboardConfig, dashboardConfig } from './dashboard-config.ts';
import { type DatabaseConfig, databaseConfig, databaseConfigProblems } from './database-config.ts';
import { type DestinationConfig, loadDestinations } from './destinations-config.ts';
import { issueMessage } from './issue-message.ts';
import { type IngestFirstConfig, ingestFirstConfig } from './ingest-first-config.ts';
import { envVariables } from './env-variables.ts';
import { type DeclaredRefetch, apiKeyEnvName, refetchFileKeys } from '../refetch/config-keys.ts';
import { type DeclaredReconcile, reconcileFileKeys } from '../reconciliation/config-keys.ts';
import { parseJsonText } from '../format/json-parse.ts';
import { type ProviderAccountEntry, accountsFileKeys } from './provider-accounts.ts';

/**
 * One provider as configured: which built-in driver it runs and with what. Checking it against
 * the driver (does it exist, does it need a secret, how long its gateway may resend) and building
 * the driver is ./configured-providers.ts's job: parsing knows no driver.
 */
export interface ProviderConfig {
  name: string;
  /** The built-in driver's name: the provider's own name unless INBOX_CONFIG says `driver`. */
  driver: string;
  /** Every secret that may have signed a webhook request: more than one during a rotation. */
  secrets: string[];
  signatureToleranceSeconds: number;
  /** How long stored events (payloads) are kept: `retentionDays`, else INBOX_RETENTION_DAYS. */
  retentionDays: number;
  /** How long their dedupe keys are kept (at least retentionDays): `keyRetentionDays`, else INBOX_KEY_RETENTION_DAYS. */
  keyRetentionDays: number;
  /** `create`: the first event seen for a charge creates the payment. `require`: the app creates it; events wait. */
  unknownPayment: 'create' | 'require';
  /** `api`, `ordering`, `ratePerSecond`: the refetch strategy's keys (src/refetch/settings.ts resolves them). */
  refetch: DeclaredRefetch;
  /** `reconcile`: the provider's settlement delay for `inboxctl reconcile` (src/reconciliation/config-keys.ts). */
  reconcile: DeclaredReconcile;
  /** GATEWAY_API_KEY_<PROVIDER>, when set. */
  envApiKey: string | undefined;
  /** `accounts`: the accounts under it with a webhook token and API key each (Asaas subaccounts); empty: its own only. */
  accounts: readonly ProviderAccountEntry[];
  /** What is left of its INBOX_CONFIG entry, for the driver's own schema. */
  options: Record<string, unknown>;
}

export type ProcessRole = 'all' | 'receiver' | 'worker';

/** What the environment and INBOX_CONFIG say, checked for shape and consistency; the drivers are ./configured-providers.ts's. */
export interface ParsedConfig {
  /** What a provider declared without its own settings gets (INBOX_RETENTION_DAYS, …): a zero-config provider's. */
  providerDefaults: ProviderDefaults;
  port: number;
  host: string;
  /** Undefined: start an embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  role: ProcessRole;
  logLevel: string;
  /** `json`, `pretty` (pino-pretty, a devDependency), or undefined: pretty on a terminal where pino-pretty is installed, else JSON. */
  logFormat: 'json' | 'pretty' | undefined;
  maxBodyBytes: number;
  /** How long a webhook request may wait for its COMMIT before it gets 503 (gateways give up at ~10 s). */
  commitDeadlineMs: number;
  /** The longest a webhook request that finds the commit slot free waits for others to share its commit (0: never; src/inbox/commit-linger.ts). */
  commitLingerMs: number;
  databaseConnectTimeoutSeconds: number;
  databasePoolSize: number;
  /** Prepared statements, LISTEN/NOTIFY and the migration URL: what a pooler in front of PostgreSQL allows. */
  database: DatabaseConfig;
  worker: WorkerConfig;
  /** Whether and how the workers of an `all` process give way to its receiver (ingest-first-config.ts). */
  ingestFirst: IngestFirstConfig;
  providers: ReadonlyMap<string, ProviderConfig>;
  /** How often the database-derived metrics (inbox counts, oldest pending, queue depth) are recounted. */
  metricsRefreshSeconds: number;
  dashboard: DashboardConfig;
  api: ApiConfig;
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
  /** 5-field cron (UTC) of the daily reconciliation of every provider with a ledger and an API key. */
  reconcileCron: string;
  /** How many days back each cron reconciliation reads the ledgers. */
  reconcileWindowDays: number;
  /** 5-field cron (UTC) of the runs of payouts a webhook announced since their entries were read. */
  reconcilePayoutsCron: string;
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

type EnvValues = z.infer<typeof envVariables>;

/** Runs a cross-field check only when the fields it reads parsed, so it never sees a bad value and never hides a good one's problem. */
function whenParsed(...names: (keyof EnvValues)[]) {
  return { when: (payload: z.core.ParsePayload) => !payload.issues.some((issue) => names.includes(issue.path?.[0] as keyof EnvValues)) };
}

/**
 * The environment, each variable parsed on its own (a z.object reports every key's problem), then
 * the checks across variables, each run when its own variables parsed: PORT=abc must not keep
 * WORKER_HEARTBEAT_SECONDS=60 with WORKER_EXPIRE_IN_SECONDS=60 from being refused in the same run.
 */
const envSchema = envVariables
  .superRefine(
    (e, ctx) => {
      if (e.WORKER_RETRY_DELAY_MAX_SECONDS < e.WORKER_RETRY_DELAY_SECONDS) {
        ctx.addIssue({ code: 'custom', path: ['WORKER_RETRY_DELAY_MAX_SECONDS'], message: 'must be at least WORKER_RETRY_DELAY_SECONDS' });
      }
    },
    whenParsed('WORKER_RETRY_DELAY_SECONDS', 'WORKER_RETRY_DELAY_MAX_SECONDS'),
  )
  .superRefine(
    (e, ctx) => {
      if (e.WORKER_HEARTBEAT_SECONDS !== undefined && e.WORKER_HEARTBEAT_SECONDS >= e.WORKER_EXPIRE_IN_SECONDS) {
        ctx.addIssue({
          code: 'custom',
          path: ['WORKER_HEARTBEAT_SECONDS'],
          message: `must be less than WORKER_EXPIRE_IN_SECONDS (${e.WORKER_EXPIRE_IN_SECONDS}); otherwise expiry always finds a dead worker first`,
        });
      }
    },
    whenParsed('WORKER_HEARTBEAT_SECONDS', 'WORKER_EXPIRE_IN_SECONDS'),
  )
  .superRefine(
    (e, ctx) => {
      for (const problem of databaseConfigProblems(e)) {
        const [variable, message] = problem.split(': ', 2) as [string, string];
        ctx.addIssue({ code: 'custom', path: [variable], message });
      }
    },
    whenParsed('DATABASE_URL', 'DATABASE_MIGRATION_URL'),
  );

const DEFAULT_HEARTBEAT_SECONDS = 30;

/**
 * The default applies only where it finds a dead worker sooner than expiry does: with an expiry of
 * 30 s or less, expiry is already as fast, and a configuration that was valid before this setting
 * existed still starts. An explicit value must be below the expiry (checked in envSchema).
 */
function workerHeartbeatSeconds(e: EnvValues): number | undefined {
  if (e.WORKER_HEARTBEAT_SECONDS !== undefined) return e.WORKER_HEARTBEAT_SECONDS;
  return e.WORKER_EXPIRE_IN_SECONDS > DEFAULT_HEARTBEAT_SECONDS ? DEFAULT_HEARTBEAT_SECONDS : undefined;
}

const providerNamePattern = /^[a-z0-9][a-z0-9-]{0,29}$/;

/** INBOX_CONFIG's top-level keys. */
const FILE_KEYS = ['providers', 'destinations'];

/** An unknown top-level key, named: a misspelt "provider" would otherwise drop its settings without a word. */
function unknownFileKeys(issue: { code?: string; keys?: string[] }): string | undefined {
  if (issue.code !== 'unrecognized_keys' || !issue.keys) return undefined;
  const names = (keys: readonly string[]) => keys.map((k) => JSON.stringify(k)).join(', ');
  return `unknown key${issue.keys.length === 1 ? '' : 's'} ${names(issue.keys)}; the file takes ${FILE_KEYS.map((k) => JSON.stringify(k)).join(' and ')}`;
}

/**
 * INBOX_CONFIG's `providers.<name>`, each key's meaning beside it (rendered into
 * docs/configuration.md). Loose: any other key is the driver's own option, for its schema.
 */
export const providerEntrySchema = z.looseObject({
  driver: z.string().min(1).describe('The built-in driver it runs ([Gateways](gateways.md)); several providers may run one driver (two Stripe accounts).'),
  secrets: z
    .array(z.string().min(1))
    .optional()
    .describe('Its webhook secrets, any of which may match; `WEBHOOK_SECRET_<PROVIDER>` adds to them (keep them in the environment if you can).'),
  retentionDays: z
    .number()
    .int()
    .positive()
    .optional()
    .meta({ whenUnset: '`INBOX_RETENTION_DAYS`', description: "How long its payloads are kept: more than its gateway's resend window." }),
  keyRetentionDays: z
    .number()
    .int()
    .positive()
    .optional()
    .meta({ whenUnset: '`INBOX_KEY_RETENTION_DAYS`', description: 'How long its dedupe keys are kept: at least `retentionDays`.' }),
  unknownPayment: z.enum(['create', 'require']).optional().meta({
    whenUnset: '`create`',
    description:
      '`create`: the first event seen for a charge creates the payment. `require`: the application creates it; events wait ([Processing](processing.md#payments)).',
  }),
  ...refetchFileKeys,
  ...reconcileFileKeys,
  ...accountsFileKeys,
});

const fileSchema = z.strictObject(
  {
    providers: z
      .record(z.string().regex(providerNamePattern, 'provider names are lower-case letters, digits and dashes, at most 30'), providerEntrySchema)
      .default({}),
    // Parsed by destinations-config.ts; named here so that unknown keys are checked in one place.
    destinations: z.unknown().optional(),
  },
  { error: unknownFileKeys },
);

const SECRET_PREFIX = 'WEBHOOK_SECRET_';

/** A variable named after its provider, which no zod key can carry: its meaning, for docs/configuration.md. */
export const webhookSecretVariable = {
  name: `${SECRET_PREFIX}<PROVIDER>`,
  description:
    'Enables provider `<provider>` with the built-in driver of that name (`WEBHOOK_SECRET_STRIPE=whsec_…` → `POST /webhooks/stripe`). Several secrets separated by commas = rotation: any may match. For a provider declared in `INBOX_CONFIG`, `-` in its name becomes `_` (`stripe-br` → `WEBHOOK_SECRET_STRIPE_BR`).',
};

/** `WEBHOOK_SECRET_STRIPE_BR` belongs to the provider `stripe-br`. */
export function secretEnvName(provider: string): string {
  return SECRET_PREFIX + provider.toUpperCase().replaceAll('-', '_');
}

function splitSecrets(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function formatIssues(error: z.ZodError, prefix = ''): string[] {
  // An issue of the whole file (an unknown top-level key) has an empty path: no ": " before its message.
  return error.issues.map((issue) => `${prefix}${issue.path.length === 0 ? '' : `${issue.path.join('.')}: `}${issueMessage(issue)}`);
}

type Env = Record<string, string | undefined>;
export type ReadFile = (path: string) => string;

export type ProviderDefaults = Pick<ProviderConfig, 'signatureToleranceSeconds' | 'retentionDays' | 'keyRetentionDays'>;

/** A bad SIGNATURE_TOLERANCE_SECONDS or INBOX_(KEY_)RETENTION_DAYS is reported with the rest; the providers are checked against the defaults meanwhile. */
function providerDefaults(env: Env): ProviderDefaults {
  const { SIGNATURE_TOLERANCE_SECONDS: tolerance, INBOX_RETENTION_DAYS: retention, INBOX_KEY_RETENTION_DAYS: keyRetention } = envVariables.shape;
  return {
    signatureToleranceSeconds: tolerance.safeParse(env.SIGNATURE_TOLERANCE_SECONDS).data ?? tolerance.parse(undefined),
    retentionDays: retention.safeParse(env.INBOX_RETENTION_DAYS).data ?? retention.parse(undefined),
    keyRetentionDays: keyRetention.safeParse(env.INBOX_KEY_RETENTION_DAYS).data ?? keyRetention.parse(undefined),
  };
}

/** A key deleted before its payload would let a resend of a stored event in as new: keys outlive payloads. */
function keyRetentionProblem({ name, retentionDays, keyRetentionDays }: ProviderConfig): string | undefined {
  if (keyRetentionDays >= retentionDays) return undefined;
  return `provider "${name}": keyRetentionDays (${keyRetentionDays}) must be at least retentionDays (${retentionDays}); dedupe keys must outlive the payloads (INBOX_KEY_RETENTION_DAYS, or keyRetentionDays in INBOX_CONFIG)`;
}

function readConfigFile(path: string, readFile: ReadFile, problems: string[]): z.infer<typeof fileSchema>['providers'] {
  let parsed: unknown;
  try {
    parsed = parseJsonText(readFile(path));
  } catch (error) {
    problems.push(`INBOX_CONFIG: cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const file = fileSchema.safeParse(parsed ?? {});
  if (file.success) return file.data.providers;
  problems.push(...formatIssues(file.error, `INBOX_CONFIG ${path}: `));
  return {};
}

/** INBOX_CONFIG's providers, then a provider per WEBHOOK_SECRET_<NAME> that the file does not declare (zero-config). */
function parseProviders(env: Env, readFile: ReadFile, problems: string[]): Map<string, ProviderConfig> {
  const defaults = providerDefaults(env);
  const declare = (name: string, entry: Partial<ProviderConfig> & { driver: string }): ProviderConfig => ({
    name,
    secrets: [],
    ...defaults,
    unknownPayment: 'create',
    refetch: {},
    reconcile: {},
    envApiKey: env[apiKeyEnvName(name)],
    accounts: [],
    options: {},
    ...entry,
  });
  const providers = new Map<string, ProviderConfig>();
  const file = env.INBOX_CONFIG ? readConfigFile(env.INBOX_CONFIG, readFile, problems) : {};
  for (const [
    name,
    { driver, secrets, retentionDays, keyRetentionDays, unknownPayment, api, ordering, ratePerSecond, connect, knownAccounts, reconcile, accounts, ...options },
  ] of Object.entries(file)) {
    providers.set(
      name,
      declare(name, {
        driver,
        secrets: secrets ?? [],
        retentionDays: retentionDays ?? defaults.retentionDays,
        keyRetentionDays: keyRetentionDays ?? defaults.keyRetentionDays,
        unknownPayment: unknownPayment ?? 'create',
        refetch: { api, ordering, ratePerSecond, connect, knownAccounts },
        reconcile: reconcile ?? {},
        accounts: accounts ?? [],
        options,
      }),
    );
  }
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith(SECRET_PREFIX) || value === undefined) continue;
    const name = key.slice(SECRET_PREFIX.length).toLowerCase().replaceAll('_', '-');
    const provider = providers.get(name);
    if (provider) provider.secrets.push(...splitSecrets(value));
    else if (providerNamePattern.test(name)) providers.set(name, declare(name, { driver: name, secrets: splitSecrets(value) }));
    else problems.push(`${key}: "${name}" is not a valid provider name`);
  }
  for (const provider of providers.values()) {
    const problem = keyRetentionProblem(provider);
    if (problem) problems.push(problem);
  }
  return providers;
}

function toConfig(e: EnvValues, providers: ReadonlyMap<string, ProviderConfig>, destinations: DestinationConfig[]): ParsedConfig {
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.INBOX_DATA_DIR,
    role: e.INBOX_ROLE,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    providerDefaults: {
      signatureToleranceSeconds: e.SIGNATURE_TOLERANCE_SECONDS,
      retentionDays: e.INBOX_RETENTION_DAYS,
      keyRetentionDays: e.INBOX_KEY_RETENTION_DAYS,
    },
    maxBodyBytes: e.MAX_BODY_BYTES,
    commitDeadlineMs: e.COMMIT_DEADLINE_MS,
    // In the all role the wait measured worse for the ack's p99 (bench/README.md#where-the-time-goes).
    commitLingerMs: e.INGEST_LINGER_MS ?? (e.INBOX_ROLE === 'receiver' ? 4 : 0),
    databaseConnectTimeoutSeconds: e.DATABASE_CONNECT_TIMEOUT_SECONDS,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    database: databaseConfig(e),
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
    ingestFirst: ingestFirstConfig(e),
    providers,
    metricsRefreshSeconds: e.METRICS_REFRESH_SECONDS,
    dashboard: dashboardConfig(e),
    api: apiConfig(e),
    destinations,
    operations: {
      sweepCron: e.SWEEP_CRON,
      sweepPendingOlderThanSeconds: e.SWEEP_PENDING_OLDER_THAN_SECONDS,
      sweepBatchSize: e.SWEEP_BATCH_SIZE,
      retentionCron: e.RETENTION_CRON,
      retentionBatchSize: e.RETENTION_BATCH_SIZE,
      archiveDir: e.INBOX_ARCHIVE_DIR ?? `${e.INBOX_DATA_DIR}/archive`,
      reconcileCron: e.RECONCILE_CRON,
      reconcileWindowDays: e.RECONCILE_WINDOW_DAYS,
      reconcilePayoutsCron: e.RECONCILE_PAYOUTS_CRON,
    },
  };
}

/**
 * Every problem found, and the providers that could still be read: the runtime checks those
 * against their drivers in the same round, so a bad deploy is fixed in one round.
 */
export type ParseResult = { ok: true; config: ParsedConfig } | { ok: false; problems: string[]; providers: ReadonlyMap<string, ProviderConfig> };

/** Reads the environment and INBOX_CONFIG once, at start. Pure apart from `readFile`; never throws for a bad value. */
export function parseConfig(env: Env, readFile: ReadFile): ParseResult {
  const problems: string[] = [];
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) problems.push(...formatIssues(parsed.error));
  const providers = parseProviders(env, readFile, problems);
  const destinations = loadDestinations(env, readFile, problems, new Set(providers.keys()));
  if (!parsed.success || problems.length > 0) return { ok: false, problems, providers };
  return { ok: true, config: toConfig(parsed.data, providers, destinations) };
}
