import type { Logger } from 'pino';
import { type Database, type SqlExecutor, drizzleExecutor } from '../db/client.ts';
import { inboxStatuses } from '../db/schema.ts';
import { describeError } from '../errors.ts';
import { countLanesByDestination } from '../delivery/lane-counts.ts';
import { countBacklogByProvider, countRecentByProvider } from '../inbox/sql/counts.ts';
import { findLastWebhookRequests } from '../inbox/sql/last-webhook-request.ts';
import type { DatabaseGauges } from './metrics.ts';
import { countOpenFindings } from '../reconciliation/sql/findings.ts';
import { selectAccountsIncomplete, selectLastCompleteRuns } from '../reconciliation/sql/runs.ts';

/** The gauges' recent window: the last hour's counts, and where a provider's last webhook request is looked for first. */
const RECENT_SECONDS = 3600;

/** The part of pg-boss the refresher reads: its cached per-queue counts. */
export interface QueueCounts {
  getQueue(name: string): Promise<{
    queuedCount: number;
    readyCount: number;
    deferredCount: number;
    activeCount: number;
    failedCount: number;
  } | null>;
}

export interface GaugeRefresherDeps {
  db: Database;
  boss: QueueCounts;
  queues: readonly string[];
  gauges: DatabaseGauges;
  /** Configured providers get a zero series even before their first event, so alerts see them. */
  providers: () => Iterable<string>;
  /** Configured destinations get zero series too. */
  destinations?: () => Iterable<string>;
  intervalMs: number;
  logger: Logger;
}

/**
 * Refreshes the database-derived gauges every `intervalMs`, so a scrape only reads memory: however
 * often Prometheus (or several of them) scrapes, the database sees two cheap queries per interval.
 * A failed refresh is logged and counted, the old values stay, and the next tick tries again.
 */
export class GaugeRefresher {
  readonly #deps: GaugeRefresherDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: GaugeRefresherDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One refresh now; resolves when the gauges hold the new values. */
  async refresh(): Promise<void> {
    const { db, gauges } = this.#deps;
    const inbox = drizzleExecutor(db);
    const [backlog, recent] = await Promise.all([countBacklogByProvider(inbox), countRecentByProvider(inbox, RECENT_SECONDS)]);
    const providers = new Set(this.#deps.providers());
    for (const row of [...backlog, ...recent]) providers.add(row.provider);
    gauges.inboxEvents.reset();
    gauges.inboxEventsLastHour.reset();
    gauges.oldestPendingAge.reset();
    for (const provider of providers) {
      gauges.oldestPendingAge.set({ provider }, 0);
      for (const status of ['pending', 'failed']) gauges.inboxEvents.set({ provider, status }, 0);
      for (const status of inboxStatuses) gauges.inboxEventsLastHour.set({ provider, status }, 0);
    }
    for (const row of backlog) {
      gauges.inboxEvents.set({ provider: row.provider, status: row.status }, row.events);
      if (row.status === 'pending') gauges.oldestPendingAge.set({ provider: row.provider }, row.oldestAgeSeconds);
    }
    for (const row of recent) gauges.inboxEventsLastHour.set({ provider: row.provider, status: row.status }, row.events);
    await this.#refreshLastWebhookRequests(inbox, [...providers]);
    await this.#refreshQueues();
    await this.#refreshLanes();
    await this.#refreshReconciliation(inbox, [...providers]);
    gauges.refreshTimestamp.setToCurrentTime();
  }

  /**
   * Open findings per provider and kind, and the accounts whose latest run stopped part-way (zero
   * for a configured provider with none, so an alert resolves); each provider's last complete run.
   */
  async #refreshReconciliation(db: SqlExecutor, providers: string[]): Promise<void> {
    const { gauges } = this.#deps;
    const [open, runs, incomplete] = await Promise.all([countOpenFindings(db), selectLastCompleteRuns(db), selectAccountsIncomplete(db)]);
    gauges.reconciliationFindingsOpen.reset();
    gauges.reconciliationLastCompleteRun.reset();
    gauges.reconciliationAccountsIncomplete.reset();
    for (const provider of providers) gauges.reconciliationAccountsIncomplete.set({ provider }, 0);
    for (const row of incomplete) gauges.reconciliationAccountsIncomplete.set({ provider: row.provider }, row.accounts);
    for (const provider of new Set([...providers, ...runs.map((r) => r.provider)])) gauges.reconciliationFindingsOpen.set({ provider, kind: 'any' }, 0);
    const totals = new Map<string, number>();
    for (const row of open) {
      gauges.reconciliationFindingsOpen.set({ provider: row.provider, kind: row.kind }, row.open);
      totals.set(row.provider, (totals.get(row.provider) ?? 0) + row.open);
    }
    for (const [provider, total] of totals) gauges.reconciliationFindingsOpen.set({ provider, kind: 'any' }, total);
    for (const run of runs) gauges.reconciliationLastCompleteRun.set({ provider: run.provider }, run.finishedAt.getTime() / 1000);
  }

  /**
   * A configured provider that has gone quiet is not in the last hour's counts, so the configured
   * list is what finds it. No webhook request ever: no series (an alert on a fresh install would be noise).
   */
  async #refreshLastWebhookRequests(inbox: SqlExecutor, providers: string[]): Promise<void> {
    const { gauges } = this.#deps;
    // A provider heard from within the hour is found in that hour's partitions; only a quiet
    // one costs the walk through every month (the answer is all time either way).
    const newest = await findLastWebhookRequests(inbox, providers, { lookFirstSince: new Date(Date.now() - RECENT_SECONDS * 1000) });
    gauges.lastWebhookRequest.reset();
    for (const { provider, receivedAt } of newest) gauges.lastWebhookRequest.set({ provider }, receivedAt.getTime() / 1000);
  }

  async #refreshQueues(): Promise<void> {
    const { boss, queues, gauges } = this.#deps;
    for (const queue of queues) {
      const counts = await boss.getQueue(queue);
      if (!counts) continue;
      gauges.queueJobs.set({ queue, state: 'queued' }, counts.queuedCount);
      gauges.queueJobs.set({ queue, state: 'ready' }, counts.readyCount);
      gauges.queueJobs.set({ queue, state: 'deferred' }, counts.deferredCount);
      gauges.queueJobs.set({ queue, state: 'active' }, counts.activeCount);
      gauges.queueJobs.set({ queue, state: 'failed' }, counts.failedCount);
    }
  }

  /**
   * Parked lanes and the disabled flag for the configured destinations only: a destination removed
   * from the configuration pages no one for lanes no worker will send. What it left in the database
   * shows apart, until `inboxctl lanes retire` clears it.
   */
  async #refreshLanes(): Promise<void> {
    const { gauges } = this.#deps;
    const counts = await countLanesByDestination(this.#deps.db);
    const configured = new Set(this.#deps.destinations?.() ?? []);
    gauges.parkedLanes.reset();
    gauges.destinationDisabled.reset();
    gauges.unconfiguredDestinationParkedLanes.reset();
    for (const destination of configured) {
      gauges.parkedLanes.set({ destination }, 0);
      gauges.destinationDisabled.set({ destination }, 0);
    }
    for (const row of counts) {
      const destination = row.destination;
      if (!configured.has(destination)) {
        gauges.unconfiguredDestinationParkedLanes.set({ destination }, row.parkedLanes);
        continue;
      }
      gauges.parkedLanes.set({ destination }, row.parkedLanes);
      gauges.destinationDisabled.set({ destination }, row.disabled ? 1 : 0);
    }
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.refresh()
        .catch((error: unknown) => {
          this.#deps.gauges.refreshFailures.inc();
          this.#deps.logger.warn({ err: error }, `metrics refresh failed (gauges keep their last values): ${describeError(error)}`);
        })
        .finally(() => {
          this.#running = undefined;
          this.#schedule(this.#deps.intervalMs);
        });
    }, delayMs);
    this.#timer.unref();
  }
}
