import { sql } from 'drizzle-orm';
import type { PgBoss } from 'pg-boss';
import { type Database, type Transaction, drizzleExecutor } from '../db/client.ts';
import { DELIVERIES_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE, DELIVERY_SEEDS_QUEUE } from './deliveries-queue.ts';
import { changeInTransaction, type LaneChangeOptions } from './lane-operations.ts';
import { deliveryDestinationRetirements, deliveryDestinations, deliveryLanes } from './schema.ts';

/** Who retires a destination and why: kept with what was cleared. */
export interface Retirement {
  by: string;
  reason: string;
}

/** What a retirement cleared (or, in a dry run, would clear). */
export interface RetirementSummary {
  lanes: number;
  parkedLanes: number;
  /** Delivery and seeding jobs that would still have run (queued, retrying, active, dead-lettered). */
  jobs: number;
  /** It had a row of its own (start, backoff, disabled). */
  hadState: boolean;
}

export interface PastRetirement extends Retirement {
  retiredAt: Date;
}

/** Queues whose jobs name a destination in their data. */
const QUEUES_NAMING_DESTINATIONS = [DELIVERIES_QUEUE, DELIVERIES_DEAD_LETTER_QUEUE, DELIVERY_SEEDS_QUEUE];
const PAGE = 10_000;
const RUNNABLE = new Set(['created', 'retry', 'active']);

/** The jobs of these queues that would still run for the destination, found through pg-boss, deleted in the caller's transaction. */
async function deleteDestinationJobs(boss: PgBoss, tx: Transaction, destination: string): Promise<number> {
  const db = drizzleExecutor(tx);
  let deleted = 0;
  for (const queue of QUEUES_NAMING_DESTINATIONS) {
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await boss.findJobs<{ destination: string }>(queue, { data: { destination }, limit: PAGE, ...(after && { after }), db });
      ids.push(...page.filter((job) => RUNNABLE.has(job.state)).map((job) => job.id));
      if (page.length < PAGE) break;
      after = page.at(-1)!.id;
    }
    if (ids.length > 0) await boss.deleteJob(queue, ids, { db });
    deleted += ids.length;
  }
  return deleted;
}

/**
 * Forgets a destination no longer configured, in one transaction: its lanes (parked ones too), the
 * jobs that would still run for it, and its own state row, so no gauge or alert names it again
 * and a destination later configured under the same name starts clean (a new start, no lane, no
 * backoff). Who and why are recorded. The payment events stay: the outbox and the feed keep them.
 */
export async function retireDestination(
  deps: { db: Database; boss: PgBoss },
  destination: string,
  retirement: Retirement,
  options: LaneChangeOptions = {},
): Promise<RetirementSummary> {
  return changeInTransaction(deps, options, async (tx) => {
    const [lanes] = await tx.execute<{ lanes: number; parked: number }>(sql`
      with gone as (delete from ${deliveryLanes} where destination = ${destination} returning parked_at)
      select count(*)::int as lanes, count(parked_at)::int as parked from gone`);
    const jobs = await deleteDestinationJobs(deps.boss, tx, destination);
    const state = await tx.execute(sql`delete from ${deliveryDestinations} where name = ${destination} returning 1`);
    const summary = { lanes: lanes!.lanes, parkedLanes: lanes!.parked, jobs, hadState: state.length > 0 };
    if (summary.lanes > 0 || summary.jobs > 0 || summary.hadState) {
      await tx.insert(deliveryDestinationRetirements).values({
        destination,
        retiredBy: retirement.by,
        reason: retirement.reason,
        lanesCleared: summary.lanes,
        parkedLanesCleared: summary.parkedLanes,
        jobsCleared: summary.jobs,
      });
    }
    return summary;
  });
}

/** The destination's last retirement, for saying so when there is nothing left to retire. */
export async function lastRetirement(db: Database, destination: string): Promise<PastRetirement | undefined> {
  const [row] = await db
    .select({
      retiredAt: deliveryDestinationRetirements.retiredAt,
      by: deliveryDestinationRetirements.retiredBy,
      reason: deliveryDestinationRetirements.reason,
    })
    .from(deliveryDestinationRetirements)
    .where(sql`${deliveryDestinationRetirements.destination} = ${destination}`)
    .orderBy(sql`${deliveryDestinationRetirements.retiredAt} desc`)
    .limit(1);
  return row;
}
