import { PgBoss } from 'pg-boss';
import type postgres from 'postgres';
import type { AppConfig } from '../../src/config/load-config.ts';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createLogger } from '../../src/logger.ts';
import { startOperationsCron } from '../../src/operations/cron.ts';
import type { OperationsMetrics } from '../../src/operations/metrics.ts';
import { type TestDatabase, useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';

export interface OperationsHarness {
  database: TestDatabase;
  handle: DatabaseHandle;
  /** pg-boss without workers, maintenance or cron: jobs stay queued so tests can count them. */
  boss: PgBoss;
}

/** A test database, the application's pool on it and a quiet pg-boss; fields filled in setup, closed at teardown. */
export function useOperationsHarness(): OperationsHarness {
  const database = useTestDatabase();
  const harness = { database } as OperationsHarness;
  setup(async () => {
    harness.handle = database.connect('operations-test', 4);
    const boss = new PgBoss({ connectionString: database.url, max: 2, supervise: false, schedule: false });
    boss.on('error', () => {});
    await boss.start();
    database.onTeardown(() => boss.stop({ graceful: false, close: true }));
    harness.boss = boss;
  });
  return harness;
}

/** A pg-boss that schedules, its cron passes every second, as a service instance runs it; stopped at teardown. */
export async function startSchedulingBoss(h: OperationsHarness): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: h.database.url,
    max: 3,
    supervise: false,
    schedule: true,
    cronMonitorIntervalSeconds: 1,
    cronWorkerIntervalSeconds: 1,
  });
  h.database.onTeardown(() => boss.stop({ graceful: false, close: true }));
  boss.on('error', () => {});
  await boss.start();
  return boss;
}

/**
 * A pg-boss that schedules (its cron passes every second) with the operations cron on it, as a
 * service instance runs it; stopped at teardown. `operations` overrides the config's schedules.
 */
export async function startCronInstance(
  h: OperationsHarness,
  config: AppConfig,
  operations: Partial<AppConfig['operations']>,
  metrics?: OperationsMetrics,
): Promise<PgBoss> {
  const boss = await startSchedulingBoss(h);
  await startOperationsCron({
    db: h.handle.db,
    boss,
    clock: () => new Date(),
    logger: createLogger('silent'),
    providers: config.providers,
    operations: { ...config.operations, ...operations },
    metrics,
  });
  return boss;
}

export interface FixtureRow {
  provider?: string;
  eventId: string;
  eventType?: string;
  resourceId?: string | null;
  status?: 'pending' | 'processed' | 'ignored' | 'failed';
  receivedAt: Date;
  occurredAt?: Date;
  processedAt?: Date | null;
  lastError?: string | null;
  attempts?: number;
  /** Default: a JSON body naming the event. */
  rawBody?: Buffer;
}

/** Inserts inbox rows the way the receiver stores them (no job: a test adds jobs itself when it wants them). */
export async function insertInboxRows(sql: postgres.Sql, rows: FixtureRow[]): Promise<number[]> {
  const ids: number[] = [];
  for (const row of rows) {
    const rawBody = row.rawBody ?? Buffer.from(JSON.stringify({ id: row.eventId, type: row.eventType ?? 'charge.succeeded' }));
    // The body's own text when it is JSON, so the jsonb keeps numbers a JS round trip would round.
    let payloadText = rawBody.toString('utf8');
    try {
      JSON.parse(payloadText);
    } catch {
      payloadText = JSON.stringify({ undecodable: rawBody.toString('base64') });
    }
    const [inserted] = await sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, attempts, last_error, processed_at)
      values (${row.provider ?? 'stripe'}, ${row.eventId}, ${row.eventType ?? 'charge.succeeded'}, ${row.resourceId === undefined ? `ch_${row.eventId}` : row.resourceId},
              ${payloadText}::text::jsonb, ${rawBody}, ${row.occurredAt ?? row.receivedAt}, ${row.receivedAt}, ${row.status ?? 'pending'},
              ${row.attempts ?? 0}, ${row.lastError ?? null}, ${row.processedAt ?? null})
      returning id`;
    ids.push(Number(inserted!.id));
  }
  return ids;
}

/** Jobs (any state) in the processing queue for these inbox rows. */
export async function jobsFor(sql: postgres.Sql, inboxIds: number[]): Promise<Array<{ inboxId: number; state: string }>> {
  const rows = await sql`
    select (data->>'inboxId')::bigint as inbox_id, state from pgboss.job
    where name = 'webhooks' and (data->>'inboxId')::bigint = any(${inboxIds}::bigint[])
    order by created_on`;
  return rows.map((r) => ({ inboxId: Number(r.inbox_id), state: String(r.state) }));
}

export const minutesAgo = (minutes: number, now = new Date()) => new Date(now.getTime() - minutes * 60_000);
export const daysAgo = (days: number, now = new Date()) => new Date(now.getTime() - days * 86_400_000);
