import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, startConsumer } from './support/consumer.ts';
import { newDestinationSecret } from './support/lanes.ts';

const BASE = 1_760_000_000;
const STUCK = 'ch_stuck';
// The stuck request outlives the whole test: whatever the others get, they get while it hangs.
const destinationOptions = { timeoutMs: 120_000 };

const database = useTestDatabase();
let consumer: Consumer;
let service: TestService;
let scratch: string;
let serviceOptions: Parameters<typeof startTestService>[0];

setup(async () => {
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  consumer.behaviour = (event) => (event.chargeId === STUCK ? { kind: 'hang' } : { kind: 'ok' });
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-isolation-'));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: { app: destinationOptions } });
  await writeFile(configPath, configText);
  const env = { DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: secret, INBOX_CONFIG: configPath };
  serviceOptions = { database, env: { WEBHOOK_SECRET_STRIPE: SECRET, ...env }, files: { [configPath]: configText } };
});

async function post(type: 'charge.succeeded' | 'charge.refunded', chargeId: string): Promise<void> {
  const refunded = type === 'charge.refunded';
  const body = chargeEvent({
    id: `evt_${chargeId}_${refunded ? 'refund' : 'paid'}`,
    type,
    chargeId,
    created: BASE + (refunded ? 60 : 0),
    ...(refunded ? { amountRefunded: 2000 } : {}),
  });
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
}

describe('a lane whose consumer hangs holds back no other payment', () => {
  // Fewer than a delivery batch, stored together: their lanes' first runs share batches with the stuck one.
  const others = Array.from({ length: 20 }, (_, n) => `ch_other_${n}`);

  test("the other payments' later events are delivered while the stuck payment's first request still hangs", async () => {
    // Stored by a receiver first, so the worker finds them together: one processing batch, one
    // batch of delivery jobs, the stuck lane among the others.
    service = await startTestService({ ...serviceOptions, env: { ...serviceOptions.env, INBOX_ROLE: 'receiver' } });
    for (const chargeId of [...others.slice(0, 10), STUCK, ...others.slice(10)]) await post('charge.succeeded', chargeId);
    await service.stop();
    service = await startTestService(serviceOptions);
    await waitUntilSettled(
      database.sql,
      [STUCK, ...others].map((c) => `evt_${c}_paid`),
      60_000,
    );
    await waitFor(() => consumer.received.some((e) => e.chargeId === STUCK), { message: "the stuck payment's first request", timeoutMs: 30_000 });
    await waitFor(() => others.every((c) => consumer.acceptedFor(c).length === 1), { message: "the other payments' first events", timeoutMs: 30_000 });

    await Promise.all(others.map((chargeId) => post('charge.refunded', chargeId)));
    await waitFor(() => others.every((c) => consumer.acceptedFor(c).some((e) => e.sequence === 2)), {
      message: "every other payment's second event, while the stuck request hangs",
      timeoutMs: 60_000,
    });
    // The setup is what makes this a test: the stuck lane's run shared its batch with others.
    const [batch] = await database.sql<{ lanes: number }[]>`
      select count(*)::int as lanes from pgboss.job j
      where j.name = 'deliveries' and j.started_on = (
        select s.started_on from pgboss.job s join payments p on p.id = (s.data->>'paymentId')::bigint
        where s.name = 'deliveries' and p.gateway_charge_id = ${STUCK})`;
    assert.ok(batch!.lanes > 1, `the stuck lane ran in a batch of ${batch!.lanes}`);
    const stuck = consumer.received.filter((e) => e.chargeId === STUCK);
    assert.deepEqual(
      stuck.map((e) => [e.sequence, e.accepted]),
      [[1, false]],
      'the stuck request is still its first, unanswered',
    );
  });
});
