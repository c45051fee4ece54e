/**
 * A destination's `kinds` filter over a real service, a real consumer and inboxctl: a filtered-out
 * event is passed over, so the lane moves on (README, Push: destinations).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, startConsumer } from './support/consumer.ts';
import { laneOf, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const database = useTestDatabase();
let consumer: Consumer;
let service: TestService;
let env: Record<string, string>;
// A real file: inboxctl reads INBOX_CONFIG from disk in its own process.
const configPath = path.join(mkdtempSync(path.join(tmpdir(), 'inbox-filters-')), 'inbox.json');
const files = { [configPath]: JSON.stringify({ destinations: { paid: { kinds: ['payment.paid'] } } }) };
writeFileSync(configPath, files[configPath]!);

setup(async () => {
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => rmSync(path.dirname(configPath), { recursive: true, force: true }));
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  env = { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_CONFIG: configPath, DESTINATION_URL_PAID: consumer.url, DESTINATION_SECRET_PAID: secret };
  service = await startTestService({ database, env, files });
});

describe('a kinds filter', () => {
  // Found by a probe: with kinds ["payment.paid"], a payment paid then refunded got its paid event
  // and then stayed "1/2 behind" in inboxctl lanes for good: the refund queued no run to pass it over.
  test('a payment whose last change is filtered out: only the wanted event is sent, and the lane moves past the other (not left behind)', async () => {
    const chargeId = 'ch_filter_1';
    const created = 1_760_000_000;
    assert.equal((await postStripe(service.baseUrl, chargeEvent({ id: 'evt_filter_1', type: 'charge.succeeded', chargeId, created }), SECRET)).status, 200);
    await waitUntilSettled(database.sql, ['evt_filter_1']);
    await waitFor(() => consumer.acceptedFor(chargeId).length === 1, { message: 'the paid event delivered' });
    const refund = chargeEvent({ id: 'evt_filter_2', type: 'charge.refunded', chargeId, created: created + 10, amountRefunded: 2000 });
    assert.equal((await postStripe(service.baseUrl, refund, SECRET)).status, 200);
    await waitUntilSettled(database.sql, ['evt_filter_2']);
    const [payment] = await paymentsOf(database.sql, [chargeId]);
    assert.equal(payment!.eventSequence, 2);
    await waitFor(async () => (await laneOf(database.sql, 'paid', payment!.id))?.deliveredSequence === 2, {
      message: 'the lane past the filtered-out refund',
      timeoutMs: 10_000,
    });
    assert.deepEqual(
      consumer.acceptedFor(chargeId).map((e) => e.type),
      ['payment.paid'],
    );
    const lanes = await runInboxctl(['lanes', '--json'], { ...env, DATABASE_URL: database.url });
    assert.equal(lanes.code, 0, lanes.stderr);
    assert.deepEqual(lanes.json().lanes, []);
    assert.equal(lanes.json().destinations[0].behindLanes, 0);
  });
});
