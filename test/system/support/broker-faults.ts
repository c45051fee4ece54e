import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type postgres from 'postgres';
import type { BrokerConsumer } from '../../delivery/support/broker-consumer.ts';
import { type PostedHistories, assertEveryPaymentInOrder, brokerHasAll, postHistories } from '../../delivery/support/histories.ts';
import { paymentsOf } from '../../delivery/support/lanes.ts';
import { type ServiceProcess, spawnService } from '../../fault/support/service-process.ts';
import { SECRET, waitUntilSettled } from '../../processing/harness.ts';
import { freePort } from '../../support/free-port.ts';
import { waitFor } from '../../support/wait.ts';

// A killed run's job comes back through its heartbeat (10 s, the least pg-boss takes), found by the
// restarted service's own supervisor; expiry stays far away. Processing goes in small batches one
// at a time, so the backlog's events are published over several seconds, not in one burst that
// could end before a strike lands (a rabbitmqctl call takes most of a second).
const WORKER_ENV = {
  WORKER_HEARTBEAT_SECONDS: '10',
  WORKER_EXPIRE_IN_SECONDS: '300',
  WORKER_POLLING_INTERVAL_SECONDS: '0.5',
  WORKER_RETRY_DELAY_SECONDS: '1',
  WORKER_BATCH_SIZE: '3',
  WORKER_CONCURRENCY: '1',
};

export interface BrokerServiceSetup {
  /** The service's environment: the database, the gateway secret, the destination's variables and INBOX_CONFIG. */
  env: Record<string, string>;
  start(role?: 'all' | 'receiver'): Promise<ServiceProcess>;
  cleanUp(): Promise<void>;
}

/** A real service process (src/main.ts) for one broker destination, which a test can kill -9. */
export async function brokerService(
  databaseUrl: string,
  destination: { name: string; url: string; secret: string; options: Record<string, unknown> },
): Promise<BrokerServiceSetup> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'inbox-broker-faults-'));
  const configPath = path.join(scratch, 'inbox.json');
  const options = { retryDelaySeconds: 0.2, retryDelayMaxSeconds: 2, ...destination.options };
  await writeFile(configPath, JSON.stringify({ destinations: { [destination.name]: options } }));
  const upper = destination.name.toUpperCase();
  const env = {
    DATABASE_URL: databaseUrl,
    WEBHOOK_SECRET_STRIPE: SECRET,
    [`DESTINATION_URL_${upper}`]: destination.url,
    [`DESTINATION_SECRET_${upper}`]: destination.secret,
    INBOX_CONFIG: configPath,
    ...WORKER_ENV,
  };
  return {
    env,
    start: async (role = 'all') => spawnService({ env: { ...env, INBOX_ROLE: role }, port: await freePort() }),
    cleanUp: () => rm(scratch, { recursive: true, force: true }),
  };
}

/**
 * The histories stored by a receiver-only process, then that process stopped: the workers started
 * next find the whole backlog and publish it while the test strikes, and no webhook is in flight
 * when it does (a gateway's POST refused by a killed receiver is another test's subject).
 */
export async function storeHistoriesFirst(setup: BrokerServiceSetup, options: { count: number; seed: number; prefix: string }): Promise<PostedHistories> {
  const receiver = await setup.start('receiver');
  try {
    return await postHistories(receiver.baseUrl, SECRET, options);
  } finally {
    await receiver.stop();
  }
}

/** How far the destination's lanes for these charges are (events confirmed and recorded), against every event there is. */
export async function laneProgress(sql: postgres.Sql, destination: string, chargeIds: readonly string[]): Promise<{ delivered: number; total: number }> {
  const [row] = await sql`
    select coalesce(sum(l.delivered_sequence), 0)::int as delivered, coalesce(sum(p.event_sequence), 0)::int as total
    from payments p left join delivery_lanes l on l.payment_id = p.id and l.destination = ${destination}
    where p.provider = 'stripe' and p.gateway_charge_id = any(${[...chargeIds]}::text[])`;
  return { delivered: row!.delivered, total: row!.total };
}

/** Every event processed, and every payment's events with the consumer in order; returns the repeats it dropped. */
export async function everyPaymentDelivered(
  sql: postgres.Sql,
  consumer: BrokerConsumer,
  { chargeIds, eventIds }: PostedHistories,
  routeOf: (chargeId: string) => string,
  context: string,
): Promise<{ repeats: number; total: number }> {
  // A kill leaves its processing jobs active until their heartbeat lapses: payments may still change.
  await waitUntilSettled(sql, eventIds, 180_000);
  const payments = await waitFor(
    async () => {
      const rows = await paymentsOf(sql, chargeIds);
      return rows.length === chargeIds.length && brokerHasAll(consumer, rows) ? rows : undefined;
    },
    { message: `every payment's last event with the consumer (${context})`, timeoutMs: 180_000, intervalMs: 250 },
  );
  const repeats = await assertEveryPaymentInOrder(sql, consumer, payments, routeOf, context);
  return { repeats, total: payments.reduce((sum, p) => sum + p.eventSequence, 0) };
}

/** Waits until one of the destination's lanes records a failed publish for want of a connection: the service saw the broker go. */
export async function aPublishFailed(sql: postgres.Sql, destination: string, during: string): Promise<void> {
  await waitFor(async () => (await sql`select 1 from delivery_lanes where destination = ${destination} and last_error ilike '%connection%'`).length > 0, {
    message: `a publish failing while ${during}`,
    timeoutMs: 60_000,
    intervalMs: 100,
  });
}

export async function parkedLanes(sql: postgres.Sql, destination: string): Promise<number> {
  const [row] = await sql`select count(*)::int as n from delivery_lanes where destination = ${destination} and parked_at is not null`;
  return row!.n;
}
