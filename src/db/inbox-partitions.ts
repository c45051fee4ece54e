import type { SqlExecutor } from './client.ts';

/**
 * webhook_inbox's monthly partitions (drizzle/0012_partitioned_inbox.sql made the first ones):
 * `webhook_inbox_pYYYY_MM` holds the rows received in that UTC month, `webhook_inbox_default`
 * whatever no month partition holds.
 */
export const DEFAULT_PARTITION = 'webhook_inbox_default';

/** Months created ahead of the current one, at each start and by the daily retention run. */
export const INBOX_PARTITION_MONTHS_AHEAD = 3;

export interface MonthPartition {
  name: string;
  /** First instant of the month, UTC. */
  from: Date;
  /** First instant of the next month. */
  to: Date;
}

export function monthPartition(instant: Date): MonthPartition {
  const from = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), 1));
  const to = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth() + 1, 1));
  const month = String(from.getUTCMonth() + 1).padStart(2, '0');
  return { name: `webhook_inbox_p${from.getUTCFullYear()}_${month}`, from, to };
}

// Serialises partition creation across instances (each runs it at start and daily).
const PARTITION_LOCK_NAMESPACE = 72_010_015;

/**
 * Creates the partitions of the month of `now` and `monthsAhead` months after it that do not exist
 * yet, in the caller's transaction. A month whose rows already sit in the default partition (this
 * job did not run for months) gets no partition: creating it would have to move them, so they
 * stay in the default partition, where row-by-row retention deletes them in time. Answers the
 * partitions created and the months left to the default partition.
 */
export async function createMonthPartitionsAhead(tx: SqlExecutor, now: Date, monthsAhead: number): Promise<{ created: string[]; leftToDefault: string[] }> {
  await tx.executeSql('select pg_advisory_xact_lock($1, 0)', [PARTITION_LOCK_NAMESPACE]);
  const { rows: existing } = await tx.executeSql<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'webhook_inbox'::regclass`,
  );
  const names = new Set(existing.map((r) => r.name));
  const result = { created: [] as string[], leftToDefault: [] as string[] };
  for (let ahead = 0; ahead <= monthsAhead; ahead += 1) {
    const month = monthPartition(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1)));
    if (names.has(month.name)) continue;
    const { rows } = await tx.executeSql<{ taken: boolean }>(
      `select exists (select 1 from ${DEFAULT_PARTITION} where received_at >= $1::timestamptz and received_at < $2::timestamptz) as taken`,
      [month.from.toISOString(), month.to.toISOString()],
    );
    if (rows[0]!.taken) {
      result.leftToDefault.push(month.name);
      continue;
    }
    // DDL takes no parameters; the bounds are ISO strings this function made.
    await tx.executeSql(
      `create table ${month.name} partition of webhook_inbox for values from ('${month.from.toISOString()}') to ('${month.to.toISOString()}')`,
    );
    result.created.push(month.name);
  }
  return result;
}

/** The month partitions that exist, oldest first (the default partition is not one). */
export async function listMonthPartitions(db: SqlExecutor): Promise<MonthPartition[]> {
  const { rows } = await db.executeSql<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'webhook_inbox'::regclass and c.relname ~ '^webhook_inbox_p[0-9]{4}_[0-9]{2}$' order by 1`,
  );
  return rows.map(({ name }) => monthPartition(new Date(Date.UTC(Number(name.slice(15, 19)), Number(name.slice(20, 22)) - 1, 1))));
}

/** Detaches a month partition from webhook_inbox and drops it, in the caller's transaction. */
export async function dropMonthPartition(tx: SqlExecutor, partition: MonthPartition): Promise<void> {
  await tx.executeSql(`alter table webhook_inbox detach partition ${partition.name}`);
  await tx.executeSql(`drop table ${partition.name}`);
}
