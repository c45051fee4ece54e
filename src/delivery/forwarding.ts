import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/config.ts';
import type { DestinationConfig } from '../config/destinations-config.ts';
import type { Database, SqlExecutor } from '../db/client.ts';
import type { ForwardingMetrics } from '../observability/metrics.ts';
import { deliveryTargets } from './deliver-lane.ts';
import { startDeliveryWorkers } from './delivery-workers.ts';
import { type AnnouncePaymentChanges, createDeliveryAnnouncer } from './enqueue-deliveries.ts';
import { closeEventTransports, createEventTransports } from './destination-transports.ts';

export interface ForwardingOptions {
  boss: PgBoss;
  db: Database;
  /** The pool behind `db`, as a prepared-statement executor (postgresExecutor). */
  sql: SqlExecutor;
  destinations: readonly DestinationConfig[];
  worker: WorkerConfig;
  logger: Logger;
  metrics?: ForwardingMetrics;
  clock: () => Date;
}

export interface Forwarding {
  /** The hook processing calls inside each payment change's transaction. */
  announceChanges: AnnouncePaymentChanges | undefined;
  /** Closes the destinations' connections (a broker's); call it once the workers have stopped. */
  closeConnections(): Promise<void>;
}

/**
 * The push side on a worker instance: the delivery workers, and the hook processing calls inside
 * each payment change's transaction. Nothing at all without destinations.
 */
export async function startForwarding(options: ForwardingOptions): Promise<Forwarding | undefined> {
  if (options.destinations.length === 0) return undefined;
  const transports = await createEventTransports(options.destinations, options.logger);
  const targets = deliveryTargets(options.destinations, transports);
  const deps = { db: options.db, sql: options.sql, boss: options.boss, targets, logger: options.logger, metrics: options.metrics, clock: options.clock };
  await startDeliveryWorkers(options.boss, deps, options.worker.pollingIntervalSeconds);
  return { announceChanges: createDeliveryAnnouncer(options.boss, options.destinations), closeConnections: () => closeEventTransports(transports, options.logger) };
}
