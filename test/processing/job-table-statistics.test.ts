import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { startTestService } from '../support/service.ts';

// pg-boss's fetch is planned from the job table's statistics; stale ones turn a 3 ms fetch into a
// sort of the whole backlog (README "Benchmarks"). The service asks autovacuum to re-analyze the
// table after a fixed number of changed rows instead of 10% of a table of retained jobs.

const database = useTestDatabase();

async function jobTableOptions(): Promise<string[]> {
  const [row] = await database.sql<{ options: string[] | null }[]>`
    select c.reloptions as options from pgboss.queue q
    join pg_class c on c.relname = q.table_name
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'pgboss'
    where q.name = 'webhooks'`;
  return row?.options ?? [];
}

test('the webhooks job table is re-analyzed after 5,000 changed rows, set once by whichever instance starts first', async () => {
  await database.sql.unsafe(`alter table pgboss.job_common reset (autovacuum_analyze_scale_factor, autovacuum_analyze_threshold)`).catch(() => {});
  const first = await startTestService({ database });
  const second = await startTestService({ database });
  try {
    const options = await jobTableOptions();
    assert.ok(options.includes('autovacuum_analyze_scale_factor=0'), JSON.stringify(options));
    assert.ok(options.includes('autovacuum_analyze_threshold=5000'), JSON.stringify(options));
  } finally {
    await second.stop();
    await first.stop();
  }
});
