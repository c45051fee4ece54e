import { type SQL, sql } from 'drizzle-orm';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { DestinationConfig, DestinationStart } from '../config/destinations-config.ts';
import { type Database, drizzleExecutor } from '../db/client.ts';
import { DELIVERY_SEEDS_QUEUE } from './deliveries-queue.ts';
import { enqueueLaneJobs } from './enqueue-deliveries.ts';
import { deliveryDestinations } from './schema.ts';

/**
 * Where a destination starts (its `start`): events written before its starts_at are never sent to
 * it (sql/lane-batch.ts starts a new lane past them, and the first event sent says what it follows).
 * `now` is resolved once, when a worker first runs with the destination, and kept in the database:
 * a restart does not move it. `beginning` or a time also queues, once, every payment that has
 * events since then, a batch at a time on the `delivery-seeds` queue, so a destination added later
 * receives them; payments changing later are queued by their changes as usual.
 */
const PAYMENTS_PER_SEED = 500;
const NOT_HERE_RETRY_SECONDS = 60;

interface SeedJobData {
  destination: string;
}

/** A text[] parameter: drizzle spreads a JS array into a list of parameters, so the array is built in SQL. */
function textArray(values: readonly string[]): SQL {
  return sql`array[${sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  )}]::text[]`;
}

function startSetting(start: DestinationStart): string {
  return start instanceof Date ? start.toISOString() : start;
}

/**
 * Records each destination's start, or resolves it again when its `start` setting changed (lanes
 * already written stay where they are). Returns the destinations still queuing earlier payments.
 */
export async function registerDestinationStarts(db: Database, destinations: readonly DestinationConfig[], logger: Logger): Promise<string[]> {
  for (const destination of destinations) {
    const setting = startSetting(destination.start);
    const at = destination.start instanceof Date ? destination.start.toISOString() : null;
    const changed = await db.execute<{ starts_at: string | null }>(sql`
      insert into ${deliveryDestinations} as d (name, starts_at, start_setting, seed_after_payment_id)
      values (${destination.name}, case when ${setting} = 'now' then now() else ${at}::timestamptz end, ${setting}, case when ${setting} = 'now' then null else 0 end)
      on conflict (name) do update set starts_at = excluded.starts_at, start_setting = excluded.start_setting,
        seed_after_payment_id = excluded.seed_after_payment_id, updated_at = now()
      where d.start_setting is distinct from excluded.start_setting
      returning d.starts_at`);
    if (changed.length > 0)
      logger.info(
        { destination: destination.name, start: setting, startsAt: changed[0]!.starts_at },
        'destination starts here: earlier events are not sent to it',
      );
  }
  const seeding = await db.execute<{ name: string }>(sql`
    select name from ${deliveryDestinations} where name = any(${textArray(destinations.map((d) => d.name))}) and seed_after_payment_id is not null`);
  return seeding.map((r) => r.name);
}

/** Queues the next seeding batch of each destination (refused, harmlessly, when one already waits). */
export async function queueSeeding(boss: PgBoss, destinations: readonly string[]): Promise<void> {
  for (const destination of destinations) await boss.send(DELIVERY_SEEDS_QUEUE, { destination } satisfies SeedJobData, { singletonKey: destination });
}

/**
 * One batch: the next payments (by id) with events since the destination's start get a lane job,
 * and the cursor moves past them, in one transaction with the next batch's job. The row lock keeps
 * two instances from queuing the same batch.
 */
async function seedBatch(db: Database, boss: PgBoss, destination: DestinationConfig): Promise<number> {
  return db.transaction(async (tx) => {
    const [row] = await tx.execute<{ after: string | null; starts_at: string | null }>(sql`
      select seed_after_payment_id as after, starts_at from ${deliveryDestinations} where name = ${destination.name} for update`);
    if (!row || row.after === null) return 0;
    const providers = destination.providers ? sql`and p.provider = any(${textArray(destination.providers)})` : sql``;
    const accounts = destination.accounts ? sql`and p.account = any(${textArray(destination.accounts)})` : sql``;
    const since =
      row.starts_at === null
        ? sql``
        : sql`and exists (select 1 from payment_events e where e.payment_id = p.id and e.created_at >= ${row.starts_at}::timestamptz)`;
    const payments = await tx.execute<{ id: string }>(sql`
      select p.id from payments p where p.id > ${row.after} and p.event_sequence > 0 ${providers} ${accounts} ${since}
      order by p.id limit ${PAYMENTS_PER_SEED}`);
    await enqueueLaneJobs(
      boss,
      tx,
      payments.map((p) => ({ destination: destination.name, paymentId: Number(p.id) })),
    );
    const done = payments.length < PAYMENTS_PER_SEED;
    const last = payments.at(-1)?.id ?? row.after;
    await tx.execute(
      sql`update ${deliveryDestinations} set seed_after_payment_id = ${done ? null : last}, updated_at = now() where name = ${destination.name}`,
    );
    if (!done)
      await boss.insert(DELIVERY_SEEDS_QUEUE, [{ data: { destination: destination.name }, singletonKey: destination.name }], { db: drizzleExecutor(tx) });
    return payments.length;
  });
}

export async function startSeedingWorker(
  boss: PgBoss,
  db: Database,
  targets: ReadonlyMap<string, { config: DestinationConfig }>,
  logger: Logger,
  pollingIntervalSeconds: number,
): Promise<void> {
  await boss.work<SeedJobData>(DELIVERY_SEEDS_QUEUE, { pollingIntervalSeconds }, async ([job]) => {
    if (!job) return;
    const target = targets.get(job.data.destination);
    if (!target) {
      // Not configured on this instance (a rolling deploy): the batch waits for one that has it.
      // A retired destination's seeding jobs are deleted with it, so this does not go on forever.
      await boss.send(DELIVERY_SEEDS_QUEUE, job.data, { singletonKey: job.data.destination, startAfter: NOT_HERE_RETRY_SECONDS });
      return;
    }
    const queued = await seedBatch(db, boss, target.config);
    logger.info({ destination: target.config.name, paymentsQueued: queued }, 'queued payments written before the destination was added (its start)');
  });
}
