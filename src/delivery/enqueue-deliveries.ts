import type { PgBoss } from 'pg-boss';
import type { DestinationConfig } from '../config/destinations-config.ts';
import { type Database, type Transaction, drizzleExecutor } from '../db/client.ts';
import type { PaymentChange } from '../domain/payments/sql/payment-events.ts';
import type { PaymentStatus } from '../domain/payments/payment-fact.ts';
import { DELIVERIES_QUEUE, type DeliveryJobData, deliveryJob } from './deliveries-queue.ts';
import { CodedError } from '../errors.ts';

export class DeliveryJobNotCreatedError extends CodedError {
  readonly code = 'delivery_job_not_created';
  constructor(expected: number, created: number) {
    super(`pg-boss created ${created} of ${expected} delivery jobs; rolling back so no payment change exists without its deliveries.`);
  }
}

/** Whether a destination has lanes for this payment at all: its providers and accounts filters. */
function destinationTakesPayment(destination: DestinationConfig, provider: string, account: string | null): boolean {
  return (
    (!destination.providers || destination.providers.includes(provider)) &&
    (!destination.accounts || (account !== null && destination.accounts.includes(account)))
  );
}

/** Whether a destination wants this change sent: its provider, account and event type filters. */
export function destinationWants(destination: DestinationConfig, event: { provider: string; account: string | null; status: PaymentStatus }): boolean {
  return destinationTakesPayment(destination, event.provider, event.account) && (!destination.kinds || destination.kinds.includes(`payment.${event.status}`));
}

/** Inserts delivery jobs for these lanes inside the caller's transaction; a refused job rolls it back. */
export async function enqueueLaneJobs(boss: PgBoss, tx: Database | Transaction, lanes: readonly DeliveryJobData[], startAfterSeconds?: number): Promise<void> {
  if (lanes.length === 0) return;
  const jobs = lanes.map((lane) => deliveryJob(lane, startAfterSeconds));
  const ids = await boss.insert(DELIVERIES_QUEUE, jobs, { db: drizzleExecutor(tx), returnId: true });
  const created = ids?.length ?? 0;
  if (created !== jobs.length) throw new DeliveryJobNotCreatedError(jobs.length, created);
}

export type AnnouncePaymentChanges = (tx: Database | Transaction, changes: readonly PaymentChange[]) => Promise<void>;

/**
 * The push side's hook into processing: called inside the transaction that writes the changes'
 * payment_events rows, it queues one job per (destination, payment) the batch changed, so the jobs
 * exist exactly when the events commit. One job per lane, however many of its events the batch wrote:
 * a run sends every undelivered event of its lane.
 */
export function createDeliveryAnnouncer(boss: PgBoss, destinations: readonly DestinationConfig[]): AnnouncePaymentChanges | undefined {
  if (destinations.length === 0) return undefined;
  return async (tx, changes) => {
    const lanes = new Map<string, DeliveryJobData>();
    for (const change of changes) {
      for (const destination of destinations) {
        // A change its kinds filter leaves out still queues the lane's run, which passes it over:
        // without it the lane would stay behind that event until a wanted change came.
        if (destinationTakesPayment(destination, change.provider, change.account))
          lanes.set(`${destination.name}:${change.paymentId}`, { destination: destination.name, paymentId: change.paymentId });
      }
    }
    await enqueueLaneJobs(boss, tx, [...lanes.values()]);
  };
}
