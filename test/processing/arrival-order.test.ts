import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { builtInHandlers } from '../support/handlers.ts';
import { type ProcessingDeps, processBatch } from '../../src/processing/process-batch.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { testConfig } from '../support/config.ts';
import { useService } from '../support/service.ts';
import { postStripe } from '../support/stripe.ts';
import { type Scenario, referenceOutcome, scenarioWithArrivalArb, stripeEvents } from '../domain/charge-scenarios.ts';
import { SECRET, inboxRows, isChain, outboundEventsOf, outboxMatchesHistory, paymentOf, storeEvent, transitionsOf, waitUntilSettled } from './harness.ts';

const BASE = 1_760_000_000;
const database = useTestDatabase();
let handle: DatabaseHandle;
let deps: ProcessingDeps;

setup(async () => {
  // Hundreds of runs of small transactions: skip the fsync per COMMIT. Visibility and locking, the
  // things under test, are the same either way; only a crash could lose the last commits.
  await database.sql.unsafe(`alter database "${database.name}" set synchronous_commit = off`);
  handle = database.connect('arrival-order-test', 4);
  deps = { db: handle.db, providers: testConfig({ WEBHOOK_SECRET_STRIPE: SECRET }).providers, handlers: createHandlerRegistry(builtInHandlers) };
});

/** The payment, the inbox rows and the status history agree with the reference model. */
async function assertMatchesReference(scenario: Scenario, chargeId: string, eventIds: string[]): Promise<void> {
  const expected = referenceOutcome(scenario);
  const payment = await paymentOf(database.sql, chargeId);
  const context = `${chargeId} ${JSON.stringify(scenario)}`;
  assert.deepEqual(
    {
      status: payment?.status,
      amount: payment?.amount,
      amountRefunded: payment?.amountRefunded,
      lastEventSecond: payment?.lastGatewayEventAt ? payment.lastGatewayEventAt.getTime() / 1000 - BASE : null,
      inquiryOpen: payment?.inquiryOpen,
    },
    {
      status: expected.status,
      amount: expected.amount,
      amountRefunded: expected.amountRefunded,
      lastEventSecond: expected.lastEventSecond,
      inquiryOpen: expected.inquiryOpen,
    },
    context,
  );
  const rows = await inboxRows(database.sql, eventIds);
  assert.ok(
    rows.every((r) => r.status === 'processed' || r.status === 'ignored'),
    `${context}: ${JSON.stringify(rows)}`,
  );
  const transitions = await transitionsOf(database.sql, chargeId);
  assert.ok(isChain(transitions, expected.status), `${context}: ${JSON.stringify(transitions)}`);
  assert.equal(new Set(transitions.map((t) => t.inboxId)).size, transitions.length, `${context}: an event took effect twice`);
  const outbound = await outboundEventsOf(database.sql, chargeId);
  assert.ok(
    outboxMatchesHistory(outbound, transitions, payment),
    `${context}: outbox ${JSON.stringify(outbound)} vs ${JSON.stringify(transitions)}, ${JSON.stringify(payment)}`,
  );
}

function assertNoFailure(results: Awaited<ReturnType<typeof processBatch>>): void {
  for (const result of results) if ('error' in result) throw result.error;
}

// 50 random histories in `npm test`; the system tier runs 200 (arrival-order.system.test.ts), and
// ARRIVAL_ORDER_RUNS sets any other number.
const RUNS = Number(process.env.ARRIVAL_ORDER_RUNS ?? 50);

describe('arrival-order independence', () => {
  test(`property (${RUNS} runs): any arrival order, with duplicates and interleaved processing one by one or in batches, ends where the true order ends, and the outbox numbers its changes 1..n`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        scenarioWithArrivalArb,
        fc.array(fc.constantFrom('hold', 'fifo', 'lifo', 'batch'), { minLength: 12, maxLength: 12 }),
        async ({ scenario, arrival }, flushes) => {
          run += 1;
          const chargeId = `ch_db_${run}`;
          const events = stripeEvents(scenario, chargeId, BASE);
          let queued: number[] = [];
          // 'batch': every queued job in one batch, as a worker fetches them (one transaction).
          const drain = async (order: 'fifo' | 'lifo' | 'batch') => {
            const jobs = queued.map((inboxId) => ({ inboxId }));
            if (order === 'batch') assertNoFailure(await processBatch(deps, jobs));
            else for (const job of order === 'fifo' ? jobs : jobs.reverse()) assertNoFailure(await processBatch(deps, [job]));
            queued = [];
          };
          for (const [position, index] of arrival.entries()) {
            // A duplicate delivery finds the stored row: its job runs again and must change nothing.
            queued.push(await storeEvent(database.sql, events[index]!));
            const flush = flushes[position % flushes.length]!;
            if (flush !== 'hold') await drain(flush);
          }
          await drain('fifo');
          await assertMatchesReference(
            scenario,
            chargeId,
            events.map((e) => e.eventId),
          );
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('arrival-order independence through HTTP and real workers', () => {
  const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET } });

  test('20 random charge histories, posted in random order with duplicates at once, all end as in true order', async () => {
    const seed = Date.now() % 2_147_483_647;
    const cases = fc.sample(scenarioWithArrivalArb, { numRuns: 20, seed });
    await Promise.all(
      cases.map(async ({ scenario, arrival }, n) => {
        const events = stripeEvents(scenario, `ch_http_${n}`, BASE);
        for (const index of arrival) {
          const response = await postStripe(service.baseUrl, events[index]!.body, SECRET);
          assert.equal(response.status, 200);
        }
      }),
    );
    for (const [n, { scenario }] of cases.entries()) {
      const eventIds = stripeEvents(scenario, `ch_http_${n}`, BASE).map((e) => e.eventId);
      await waitUntilSettled(database.sql, eventIds, 30_000);
      await assertMatchesReference(scenario, `ch_http_${n}`, eventIds).catch((error: Error) => {
        error.message = `(fc.sample seed ${seed}, case ${n}) ${error.message}`;
        throw error;
      });
    }
  });
});
