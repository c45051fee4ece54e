import type { SqlExecutor } from '../../db/client.ts';
import { EXACT_COLUMNS, type ExactInboxRow } from './archive-rows.ts';
import { NOT_CARRIED_YET } from './carry-over.ts';

/**
 * Blocks every write to one month partition until the transaction ends (reads go on), then says
 * whether every row in it is settled (processed or ignored), belongs to one of `providers` and
 * has its fact in payment_facts already (carry-over.ts).
 */
export async function lockSettledPartition(tx: SqlExecutor, partition: string, providers: readonly string[]): Promise<{ rows: number; blocking: number }> {
  await tx.executeSql(`lock table ${partition} in exclusive mode`);
  const { rows } = await tx.executeSql<{ rows: number; blocking: number }>(
    `select count(*)::int as rows,
            count(*) filter (where status not in ('processed', 'ignored') or provider <> all($1::text[]) or ${NOT_CARRIED_YET})::int as blocking
     from ${partition}`,
    [[...providers]],
  );
  return rows[0]!;
}

/**
 * The next rows of one partition after the id `after`, by id: a walk along its primary key. The
 * ORDER BY names the table's column: a bare `id` is the output's `id::float8`, which no index has,
 * and every batch sorted the whole month (520 s for a month of 906,570 rows at 10^7).
 */
export async function selectPartitionRows(tx: SqlExecutor, partition: string, after: number, limit: number): Promise<ExactInboxRow[]> {
  const { rows } = await tx.executeSql<Omit<ExactInboxRow, 'raw_body_base64'> & { raw_body: Buffer }>(
    `select ${EXACT_COLUMNS} from ${partition} where id > $1::bigint order by ${partition}.id limit $2`,
    [after, limit],
  );
  return rows.map(({ raw_body, ...row }) => ({ ...row, raw_body_base64: Buffer.from(raw_body).toString('base64') }));
}

/** The conflicts recorded against one partition's rows: their foreign key would refuse the detach. */
export async function deleteConflictsOfPartition(tx: SqlExecutor, from: Date, to: Date): Promise<void> {
  await tx.executeSql('delete from webhook_inbox_conflicts where inbox_received_at >= $1::timestamptz and inbox_received_at < $2::timestamptz', [
    from.toISOString(),
    to.toISOString(),
  ]);
}
