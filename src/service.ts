import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { type DatabaseHandle, connectDatabase, connectPool, postgresExecutor } from './db/client.ts';
import { reachingDatabase } from './db/database-unreachable.ts';
import { applyMigrations } from './db/migrate.ts';
import { type OperatorRoutes, createApp } from './http/app.ts';
import { type BoundPort, bindPort } from './http/server.ts';
import { createConflictRecorder } from './inbox/conflicting-duplicates.ts';
import { DEFAULT_CONCURRENT_BATCHES, type Ingestor, createGroupCommitIngestor } from './inbox/group-commit.ts';
import { type IngestPressureMeter, createIngestPressureMeter } from './inbox/ingest-pressure.ts';
import { createCommitLinger } from './inbox/commit-linger.ts';
import { createApiRoutes } from './api/api-routes.ts';
import { createAdminAccess } from './dashboard/admin-access.ts';
import { createDashboardRoutes } from './dashboard/dashboard-routes.ts';
import { predictReplay } from './processing/predict-replay.ts';
import { createAllowedHosts } from './web/allowed-hosts.ts';
import { GaugeRefresher } from './operations/gauge-refresher.ts';
import { type Metrics, createMetrics } from './observability/metrics.ts';
import { startOperationsCron } from './operations/cron.ts';
import { reconcileTargetsOf, startReconcileCron } from './operations/reconcile-cron.ts';
import { gatewayLedgers } from './gateways/registry.ts';
import type { HandlerRegistry } from './processing/handlers.ts';
import { FactCarryOver } from './processing/fact-carry-over.ts';
import { startProcessing } from './processing/workers.ts';
import { startBoss } from './queue/boss.ts';
import { webhookJobInsert } from './queue/embedded-job-insert.ts';
import { type JobTableAnalyzer, startJobTableAnalyzer } from './queue/job-table-statistics.ts';
import type { AppConfig } from './config/load-config.ts';
import { createUnknownAccountWatch } from './inbox/unknown-accounts.ts';
import { isAccountDeauthorized } from './refetch/account-access-sql.ts';
import { createRefetcher } from './refetch/refetcher.ts';
import { gatewayApiTargets } from './refetch/settings.ts';
import { WEBHOOKS_DEAD_LETTER_QUEUE, WEBHOOKS_QUEUE } from './queue/queues.ts';
import { type Forwarding, startForwarding } from './delivery/forwarding.ts';
import { DELIVERIES_QUEUE, ensureDeliveriesQueue } from './delivery/deliveries-queue.ts';
import type { DeliveryTimers } from './delivery/delivery-timers.ts';

/** Most webhook requests one ingest statement carries. */
const INGEST_BATCH_SIZE = 100;

export interface ServiceOptions {
  config: AppConfig;
  /** The database to use: DATABASE_URL, or the embedded cluster main.ts started. */
  databaseUrl: string;
  logger: Logger;
  clock?: () => Date;
  /** The push side's timeouts and run budget (src/delivery/delivery-timers.ts); tests move them by hand. */
  deliveryTimers?: DeliveryTimers;
  /** Event handlers by canonical kind; default: the built-in ones (src/processing/built-in-handlers.ts). */
  handlers?: HandlerRegistry;
  /** One registry per service instance; tests may pass their own to read it. */
  metrics?: Metrics;
  /**
   * Test seam, used only by the fault suite's control (test/fault/support/ack-before-commit-main.ts),
   * which wraps the ingestor to ack before COMMIT and proves the checker sees loss. No config or env
   * reaches it: production never sets it.
   */
  wrapIngestor?: (ingestor: Ingestor) => Ingestor;
  /** PORT, already taken (main.ts takes it before anything else); default: taken here, first. */
  boundPort?: BoundPort;
}

export interface RunningService {
  port: number;
  database: DatabaseHandle;
  boss: PgBoss;
  metrics: Metrics;
  stop(): Promise<void>;
}

/** The dashboard (unless INBOX_DASHBOARD is off) and /api/v1 (with INBOX_API_TOKEN), behind one host guard. */
function operatorRoutes(config: AppConfig, database: DatabaseHandle, boss: PgBoss, clock: () => Date): OperatorRoutes | undefined {
  const { dashboard } = config;
  if (!dashboard.enabled && !config.api.token) return undefined;
  const allowedHosts = createAllowedHosts({ publicOrigin: dashboard.publicOrigin, hosts: dashboard.allowedHosts });
  const dashboardRoutes = dashboard.enabled
    ? createDashboardRoutes({
        db: database.db,
        boss,
        providers: () => config.providers.keys(),
        destinations: () => config.destinations.map((d) => d.name),
        predictReplay: (filter, statuses) => predictReplay(database.db, boss, config, filter, statuses),
        access: createAdminAccess(dashboard.adminToken),
        allowedHosts,
        publishedOverHttps: dashboard.publishedOverHttps,
        clock,
      })
    : undefined;
  const apiRoutes = config.api.token ? createApiRoutes({ db: database.db, token: config.api.token }) : undefined;
  return {
    allowedHosts,
    mountRoutes: (app) => {
      if (dashboardRoutes) app.route('/', dashboardRoutes);
      if (apiRoutes) app.route('/', apiRoutes);
    },
  };
}

/**
 * Only a process that both receives and processes has a receiver for its workers to give way to.
 * The quiet period runs on the service's clock (a test moves it on instead of waiting); a wall
 * clock stepped back by NTP only prolongs the yielding by the step.
 */
function ingestPressureOf(config: AppConfig, clock: () => Date): IngestPressureMeter | undefined {
  if (config.role !== 'all' || !config.ingestFirst.enabled) return undefined;
  const { ackLatencyMs, queueDepth, quietMs } = config.ingestFirst;
  return createIngestPressureMeter({ ackLatencyMs, queueDepth, quietMs, now: () => clock().getTime() });
}

/**
 * The composition root: the port first (one taken by another process is said before anything
 * starts), then migrations, pools, pg-boss, the receiver and (unless receiver-only) the workers.
 * Stopping reverses it: stop accepting, drain in-flight requests and jobs, close pools.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const server = options.boundPort ?? (await bindPort(options.config.port, options.config.host));
  try {
    return await startOn(server, options);
  } catch (error) {
    if (!options.boundPort) await server.close();
    throw error;
  }
}

/**
 * The steps of a start, in order. Each is a function below, given what the steps before it made;
 * `stopService` undoes them in reverse.
 */
async function startOn(server: BoundPort, options: ServiceOptions): Promise<RunningService> {
  const { config, logger } = options;
  const clock = options.clock ?? (() => new Date());
  await migrateDatabase(options);
  const pools = connectPools(options);
  const boss = await startQueues(options);
  const metrics = options.metrics ?? createMetrics({ providers: config.providers.keys(), destinations: destinationNamesOf(config) });
  const gaugeRefresher = startGaugeRefresher(options, pools, boss, metrics);
  const traffic = { accepting: true };
  const ingestPressure = ingestPressureOf(config, clock);
  if (ingestPressure) metrics.ingestFirst.readPressureFrom(() => ingestPressure.level());
  const ingestor = await createIngestor(options, pools, boss, ingestPressure);
  const app = createServiceApp(options, { pools, boss, metrics, ingestor, clock, isAcceptingTraffic: () => traffic.accepting });
  if (config.dashboard.startupWarning) logger.warn(config.dashboard.startupWarning);
  const workers = config.role === 'receiver' ? undefined : await startWorkers(options, { pools, boss, metrics, clock, ingestPressure });
  serveApp(server, app, options);
  return {
    port: server.port,
    database: pools.database,
    boss,
    metrics,
    stop: () => stopService({ server, traffic, gaugeRefresher, workers, boss, pools, config }),
  };
}

/** The first statements at start: a database that is not there is said in one line, not a stack. */
async function migrateDatabase({ config, databaseUrl }: ServiceOptions): Promise<void> {
  const migrationUrl = config.database.migrationUrl ?? databaseUrl;
  await reachingDatabase(migrationUrl, databaseVariableOf(config, migrationUrl), () => applyMigrations(migrationUrl));
}

/** Which setting named a database URL, for the line that says it cannot be reached. */
function databaseVariableOf(config: AppConfig, url: string): string | undefined {
  return url === config.database.migrationUrl ? 'DATABASE_MIGRATION_URL' : url === config.databaseUrl ? 'DATABASE_URL' : undefined;
}

interface Pools {
  database: DatabaseHandle;
  /** The group commit's own connections; none in the worker role, which receives nothing. */
  ingestPool: DatabaseHandle['sql'] | undefined;
}

function connectPools({ config, databaseUrl }: ServiceOptions): Pools {
  const connection = {
    preparedStatements: config.database.preparedStatements,
    url: databaseUrl,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
  };
  const database = connectDatabase({ ...connection, poolSize: config.databasePoolSize, applicationName: `webhook-inbox:${config.role}` });
  // The group commit's own connections, one per batch in flight. A prepared statement is planned
  // per connection: PostgreSQL plans its first five executions one by one before it settles on a
  // generic plan, and the ingest statement has a text per batch size. Spread over the shared pool,
  // batches kept landing on connections that had not settled yet, and planning was a third of
  // PostgreSQL's time per webhook request (bench/README.md#where-the-time-goes). Its own connections
  // also never wait behind the workers' transactions for a free one.
  const ingestPool =
    config.role === 'worker'
      ? undefined
      : connectPool({ ...connection, poolSize: DEFAULT_CONCURRENT_BATCHES, applicationName: `webhook-inbox:${config.role}:ingest` });
  return { database, ingestPool };
}

/** pg-boss, started (its schema and the webhooks queues), and the deliveries queue. */
async function startQueues({ config, databaseUrl, logger }: ServiceOptions): Promise<PgBoss> {
  const boss = await reachingDatabase(databaseUrl, databaseVariableOf(config, databaseUrl), () =>
    startBoss({
      url: databaseUrl,
      role: config.role,
      worker: config.worker,
      listenNotify: config.database.listenNotify,
      preparedStatements: config.database.preparedStatements,
      poolSize: Math.max(4, Math.ceil(config.databasePoolSize / 2)),
      connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
      logger,
    }),
  );
  await ensureDeliveriesQueue(boss, config.worker);
  return boss;
}

const destinationNamesOf = (config: AppConfig) => config.destinations.map((d) => d.name);

function startGaugeRefresher({ config, logger }: ServiceOptions, pools: Pools, boss: PgBoss, metrics: Metrics): GaugeRefresher {
  const gaugeRefresher = new GaugeRefresher({
    db: pools.database.db,
    boss,
    queues: [WEBHOOKS_QUEUE, WEBHOOKS_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE],
    gauges: metrics.gauges,
    providers: () => config.providers.keys(),
    destinations: () => destinationNamesOf(config),
    intervalMs: config.metricsRefreshSeconds * 1000,
    logger,
  });
  gaugeRefresher.start();
  return gaugeRefresher;
}

/** The group commit the webhook route stores through (wrapped by the fault suite's control only). */
async function createIngestor(options: ServiceOptions, pools: Pools, boss: PgBoss, ingestPressure: IngestPressureMeter | undefined): Promise<Ingestor> {
  const { config } = options;
  const groupCommit = createGroupCommitIngestor({
    sql: pools.ingestPool ?? pools.database.sql,
    jobs: await webhookJobInsert(boss),
    conflicts: createConflictRecorder({ driverOf: (provider) => config.providers.get(provider)?.driver }),
    maxBatchSize: INGEST_BATCH_SIZE,
    // One batch in flight, not one per pool connection (see DEFAULT_CONCURRENT_BATCHES).
    maxConcurrentBatches: DEFAULT_CONCURRENT_BATCHES,
    commitDeadlineMs: config.commitDeadlineMs,
    pressure: ingestPressure,
    linger: createCommitLinger({ lingerMs: config.commitLingerMs, maxBatchSize: INGEST_BATCH_SIZE, now: () => performance.now() }),
  });
  return options.wrapIngestor ? options.wrapIngestor(groupCommit) : groupCommit;
}

interface AppParts {
  pools: Pools;
  boss: PgBoss;
  metrics: Metrics;
  ingestor: Ingestor;
  clock: () => Date;
  isAcceptingTraffic: () => boolean;
}

/** The receiver, /metrics and health, and the operator routes, as one hono app. */
function createServiceApp({ config, logger }: ServiceOptions, { pools, boss, metrics, ingestor, clock, isAcceptingTraffic }: AppParts) {
  return createApp({
    driverFor: (provider) => config.providers.get(provider)?.driver,
    accounts: createUnknownAccountWatch({
      accountsOf: (provider) => config.providers.get(provider)?.accounts,
      logger,
      count: metrics.webhookRequests.unknownAccount,
    }),
    ingestor,
    maxBodyBytes: config.maxBodyBytes,
    clock,
    logger,
    metrics,
    // Ready means it can store events now: the connection the group commit stores them on.
    pingDatabase: async () => {
      await (pools.ingestPool ?? pools.database.sql)`select 1`;
    },
    readinessTimeoutMs: 1000,
    isAcceptingTraffic,
    receiveWebhooks: config.role !== 'worker',
    operator: operatorRoutes(config, pools.database, boss, clock),
  });
}

interface Workers {
  jobTableAnalyzer: JobTableAnalyzer;
  factCarryOver: FactCarryOver;
  /** None without destinations. */
  forwarding: Forwarding | undefined;
}

/** Everything but the receiver: the push to destinations, processing, the cron jobs and the background upkeep. */
async function startWorkers(
  { config, logger, handlers, deliveryTimers }: ServiceOptions,
  {
    pools,
    boss,
    metrics,
    clock,
    ingestPressure,
  }: { pools: Pools; boss: PgBoss; metrics: Metrics; clock: () => Date; ingestPressure: IngestPressureMeter | undefined },
): Promise<Workers> {
  const { database } = pools;
  for (const provider of config.providers.values()) if (provider.refetch.startupWarning) logger.warn(provider.refetch.startupWarning);
  const refetcher = createRefetcher({
    targets: gatewayApiTargets(config.providers.values()),
    clock,
    metrics: metrics.refetch,
    accountAccess: { isDeauthorized: (provider, account) => isAccountDeauthorized(database.db, provider, account) },
  });
  const forwarding = await startForwarding({
    boss,
    db: database.db,
    sql: postgresExecutor(database.sql),
    destinations: config.destinations,
    worker: config.worker,
    logger,
    metrics: metrics.forwarding,
    clock,
    timers: deliveryTimers,
  });
  await startProcessing({
    boss,
    db: database.db,
    providers: config.providers,
    worker: config.worker,
    logger,
    handlers,
    metrics: metrics.processing,
    refetcher,
    announceChanges: forwarding?.announceChanges,
    ingestPressure,
    ingestFirst: config.ingestFirst,
    ingestFirstMetrics: metrics.ingestFirst,
  });
  await startOperationsCron({ boss, db: database.db, clock, logger, providers: config.providers, operations: config.operations, metrics: metrics.operations });
  const targets = reconcileTargetsOf(config.providers.values(), gatewayLedgers);
  await startReconcileCron({
    boss,
    db: database.db,
    clock,
    logger,
    targets,
    get: (provider, path, account) => refetcher.get(provider, path, undefined, account),
    isDeauthorized: (provider, account) => isAccountDeauthorized(database.db, provider, account),
    operations: config.operations,
  });
  const jobTableAnalyzer = await startJobTableAnalyzer({ boss, queue: WEBHOOKS_QUEUE, logger });
  // Facts settled before payment_facts existed, carried there in the background (once per install).
  const factCarryOver = new FactCarryOver({ db: database.db, providers: config.providers, logger });
  factCarryOver.start();
  return { jobTableAnalyzer, factCarryOver, forwarding };
}

/** Worker instances listen too: their processing metrics and health must be reachable. */
function serveApp(server: BoundPort, app: ReturnType<typeof createApp>, { config, logger }: ServiceOptions): void {
  server.serve(app);
  if (config.role === 'worker') logger.info({ port: server.port }, 'serving /metrics and health checks (worker role: no webhooks)');
  else logger.info({ port: server.port, providers: [...config.providers.keys()] }, 'receiving webhooks');
}

/** The start in reverse: stop accepting, drain in-flight requests and jobs, close the pools. */
async function stopService(running: {
  server: BoundPort;
  traffic: { accepting: boolean };
  gaugeRefresher: GaugeRefresher;
  workers: Workers | undefined;
  boss: PgBoss;
  pools: Pools;
  config: AppConfig;
}): Promise<void> {
  const { server, traffic, gaugeRefresher, workers, boss, pools, config } = running;
  traffic.accepting = false;
  await server.close();
  await gaugeRefresher.stop();
  await workers?.jobTableAnalyzer.stop();
  await workers?.factCarryOver.stop();
  await boss.stop({ graceful: true, timeout: config.worker.shutdownTimeoutMs });
  // After the workers: a publish still in flight gets its confirm before its connection ends.
  await workers?.forwarding?.closeConnections();
  await pools.ingestPool?.end({ timeout: 5 });
  await pools.database.close();
}
