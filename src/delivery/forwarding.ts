import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/config.ts';
import type { DestinationConfig } from '../config/destinations-config.ts';
import type { Database, SqlExecutor } from '../db/client.ts';
import type { ForwardingMetrics } from './metrics.ts';
import { deliveryTargets } from './deliver-lane.ts';
import { type DeliveryTimers, systemDeliveryTimers } from './delivery-timers.ts';
import { startDeliveryWorkers } from './delivery-workers.ts';
import { queueSeeding, registerDestinationStarts, startSeedingWorker } from './destination-start.ts';
import { publicKeyOf } from './sign.ts';
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
  /** A POST's timeout and a run's budget (default: the process's timers; a test's clock moves them). */
  timers?: DeliveryTimers;
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
  const { db, boss, logger, worker } = options;
  const transports = await createEventTransports(options.destinations, logger);
  const targets = deliveryTargets(options.destinations, transports);
  const deps = { db, sql: options.sql, boss, targets, logger, metrics: options.metrics, clock: options.clock, timers: options.timers ?? systemDeliveryTimers };
  for (const destination of options.destinations) {
    const publicKeys = destination.secrets.map(publicKeyOf).filter((key) => key !== undefined);
    // Public halves only: what the application verifies v1a signatures with.
    if (publicKeys.length > 0)
      logger.info({ destination: destination.name, publicKeys }, 'destination signed with ed25519 (v1a): its consumers verify with these whpk_ keys');
  }
  // Before processing starts on this instance, so `start: now` is before any change it announces.
  const seeding = await registerDestinationStarts(db, options.destinations, logger);
  await startDeliveryWorkers(boss, deps, worker.pollingIntervalSeconds);
  await startSeedingWorker(boss, db, targets, logger, worker.pollingIntervalSeconds);
  await queueSeeding(boss, seeding);
  return { announceChanges: createDeliveryAnnouncer(boss, options.destinations), closeConnections: () => closeEventTransports(transports, logger) };
}
