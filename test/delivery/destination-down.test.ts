import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const BASE = 1_760_000_000;
const MAX_ATTEMPTS = 3;
const destinationOptions = { maxAttempts: MAX_ATTEMPTS, timeoutMs: 3_000, retryDelaySeconds: 0.2, retryDelayMaxSeconds: 1, backoffAfterFailingLanes: 5 };
const CHARGES = Array.from({ length: 20 }, (_, n) => `ch_down_${n}`);

const database = useTestDatabase();
let consumer: Consumer;
let scratch: string;
let service: TestService;
/** The consumer answers 503 to every request while this holds: the destination is down, not one lane. */
let down = true;

setup(async () => {
  // Registered first, so closed last: after the service has stopped (teardown runs last in, first out).
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  consumer.behaviour = () => (down ? { kind: 'status', status: 503 } : { kind: 'ok' });
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-down-'));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: { app: destinationOptions } });
  await writeFile(configPath, configText);
  const env = { WEBHOOK_SECRET_STRIPE: SECRET, DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: secret, INBOX_CONFIG: configPath };
  service = await startTestService({ database, env, files: { [configPath]: configText } });
});

test('a destination that answers no 2xx at all backs off as a whole: no lane parks, and once it answers every payment is delivered in order', async () => {
  for (const [n, chargeId] of CHARGES.entries()) {
    const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE + n });
    assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
  }
  // Backed off, probed, still down, backed off again: long past the 3 attempts that would park a lane.
  await waitFor(async () => {
    const [row] = await database.sql`select backoff_trips from delivery_destinations where name = 'app'`;
    return (row?.backoff_trips ?? 0) >= 2;
  }, { message: 'the destination backing off twice', timeoutMs: 60_000 });
  const parked = await database.sql`select payment_id from delivery_lanes where destination = 'app' and parked_at is not null`;
  assert.equal(parked.length, 0, 'no lane parked while the whole destination was down');
  const attempts = await database.sql`select max(attempts)::int as most from delivery_lanes where destination = 'app'`;
  assert.ok(attempts[0]!.most < MAX_ATTEMPTS, `no lane spent its attempts during the outage (most: ${attempts[0]!.most})`);

  down = false;
  const payments = await waitFor(async () => {
    const rows = await paymentsOf(database.sql, CHARGES);
    return rows.length === CHARGES.length ? rows : undefined;
  }, { message: 'a payment for every charge' });
  await waitFor(() => allDelivered(consumer, payments), { message: 'every payment delivered once the destination answers', timeoutMs: 60_000 });
  for (const payment of payments) assert.ok(applyBySequence(consumer.acceptedFor(payment.chargeId)).inOrder, payment.chargeId);
  // The consumer's 2xx comes before the service records it (and the probe's end of the backoff): wait for the record.
  await waitFor(
    async () => {
      const [destination] = await database.sql`select backoff_trips, backoff_until from delivery_destinations where name = 'app'`;
      return destination?.backoff_trips === 0 && destination.backoff_until === null;
    },
    { message: 'the first 2xx ending the backoff (backoff_trips 0, backoff_until null)' },
  );
});
