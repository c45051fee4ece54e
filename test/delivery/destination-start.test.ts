import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, startConsumer } from './support/consumer.ts';
import { deliveriesSettled } from './support/delivery-time.ts';
import { newDestinationSecret } from './support/lanes.ts';

// Where a destination added later starts. First the inbox runs with no destination: charges A and
// B are paid, then (after a moment we note) C is paid. Then three destinations are added at once:
// `fresh` (no start: `now`, the default), `everything` (`beginning`) and `since` (the noted moment).
// After they are added, A is refunded. Every consumer applies as the docs' consumer does.

const BASE = 1_760_000_000;
const database = useTestDatabase();
const consumers = new Map<string, Consumer>();
let scratch: string;
let service: TestService;
let noted: Date;
let withDestinations: { env: Record<string, string>; files: Record<string, string> };

async function pay(chargeId: string, n: number): Promise<void> {
  const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE + n });
  assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
  await waitUntilSettled(database.sql, [`evt_${chargeId}_paid`], 30_000);
}

setup(async () => {
  database.onTeardown(() => Promise.all([...consumers.values()].map((c) => c.close())));
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET } });
  await pay('ch_a', 0);
  await pay('ch_b', 1);
  // A moment strictly between B's event and C's, as the database wrote them.
  [{ noted }] = (await database.sql`select clock_timestamp() as noted`) as unknown as [{ noted: Date }];
  await pay('ch_c', 2);
  await service.stop();

  const env: Record<string, string> = { WEBHOOK_SECRET_STRIPE: SECRET };
  for (const name of ['fresh', 'everything', 'since']) {
    const secret = newDestinationSecret();
    const consumer = await startConsumer(secret);
    consumer.behaviour = () => ({ kind: 'docs_consumer' });
    consumers.set(name, consumer);
    Object.assign(env, { [`DESTINATION_URL_${name.toUpperCase()}`]: consumer.url, [`DESTINATION_SECRET_${name.toUpperCase()}`]: secret });
  }
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-start-'));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: { everything: { start: 'beginning' }, since: { start: noted.toISOString() } } });
  await writeFile(configPath, configText);
  withDestinations = { env: { ...env, INBOX_CONFIG: configPath }, files: { [configPath]: configText } };
  service = await startTestService({ database, ...withDestinations });
});

/** What a consumer received: `<charge>#<sequence>^<follows_sequence>`, in arrival order per charge. */
function received(name: string): string[] {
  return consumers
    .get(name)!
    .received.map((e) => `${e.chargeId}#${e.sequence}^${e.followsSequence}`)
    .sort();
}

describe('where a destination added later starts', () => {
  test('beginning: every payment from before it was added is queued once and delivered; now and a time: nothing from before their start', async () => {
    await waitFor(async () => (await deliveriesSettled(database.sql)) && consumers.get('everything')!.received.length >= 3, {
      message: 'the earlier payments delivered to `everything`',
    });
    assert.deepEqual(received('everything'), ['ch_a#1^0', 'ch_b#1^0', 'ch_c#1^0']);
    assert.deepEqual(received('since'), ['ch_c#1^0'], 'only the payment written after its start time');
    assert.deepEqual(received('fresh'), [], 'nothing from before it was added');
    const [row] = await database.sql`select seed_after_payment_id from delivery_destinations where name = 'everything'`;
    assert.equal(row!.seed_after_payment_id, null, 'queuing the earlier payments is done');
  });

  test("a change after it was added reaches every destination; where events before the start were not sent, it says so (follows_sequence 0) and the docs' consumer applies it", async () => {
    const refunded = chargeEvent({ id: 'evt_ch_a_refund', type: 'charge.refunded', chargeId: 'ch_a', created: BASE + 60, amountRefunded: 2000 });
    assert.equal((await postStripe(service.baseUrl, refunded, SECRET)).status, 200);
    await waitFor(() => [...consumers.values()].every((c) => c.received.some((e) => e.chargeId === 'ch_a' && e.sequence === 2)), {
      message: "A's refund at every destination",
    });
    assert.deepEqual(received('fresh'), ['ch_a#2^0']);
    assert.deepEqual(received('since'), ['ch_a#2^0', 'ch_c#1^0']);
    assert.deepEqual(received('everything'), ['ch_a#1^0', 'ch_a#2^1', 'ch_b#1^0', 'ch_c#1^0']);
    for (const [name, consumer] of consumers) {
      assert.ok(
        consumer.received.every((e) => e.accepted),
        `${name}: the docs' consumer applied every event (no 409)`,
      );
      assert.equal(consumer.docs.applied.get('stripe:ch_a'), 2, name);
    }
  });

  test('a restart keeps `now` where it was and queues nothing again', async () => {
    const before = await database.sql`select name, starts_at, start_setting from delivery_destinations order by name`;
    await service.stop();
    service = await startTestService({ database, ...withDestinations });
    const after = await database.sql`select name, starts_at, start_setting from delivery_destinations order by name`;
    assert.deepEqual(after, before);
    assert.deepEqual(
      before.map((r) => [r.name, r.start_setting]),
      [
        ['everything', 'beginning'],
        ['fresh', 'now'],
        ['since', noted.toISOString()],
      ],
    );
  });
});
