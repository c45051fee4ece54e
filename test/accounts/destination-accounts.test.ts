/**
 * A destination filtered to one account (`accounts` in its options): a real service, a real
 * consumer verifying with the official `standardwebhooks` package. It receives that account's
 * payments only (not another account's, nor a direct integration's), each payment's events in
 * sequence order; an unfiltered destination receives every payment.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startConsumer, type Consumer } from '../delivery/support/consumer.ts';
import { newDestinationSecret } from '../delivery/support/lanes.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { connectEvent, shuffled } from './support.ts';

const WANTED = 'acct_1Wanted';
const OTHER = 'acct_1Other';

const database = useTestDatabase();
let only: Consumer;
let every: Consumer;
let service: TestService;

setup(async () => {
  database.onTeardown(() => only?.close());
  database.onTeardown(() => every?.close());
  const [onlySecret, everySecret] = [newDestinationSecret(), newDestinationSecret()];
  only = await startConsumer(onlySecret);
  every = await startConsumer(everySecret);
  const files = {
    '/inbox.json': JSON.stringify({ providers: { stripe: { driver: 'stripe', connect: true } }, destinations: { wanted: { accounts: [WANTED] }, every: {} } }),
  };
  const env = {
    WEBHOOK_SECRET_STRIPE: SECRET,
    INBOX_CONFIG: '/inbox.json',
    DESTINATION_URL_WANTED: only.url,
    DESTINATION_SECRET_WANTED: onlySecret,
    DESTINATION_URL_EVERY: every.url,
    DESTINATION_SECRET_EVERY: everySecret,
  };
  service = await startTestService({ database, env, files });
});

/** Per payment: paid, refunded in part, refunded in full: three events, three outbound changes. */
function historyOf(account: string | undefined, chargeId: string, created: number) {
  return [
    connectEvent(account, { id: `evt_${chargeId}_1`, type: 'charge.succeeded', chargeId, created }),
    connectEvent(account, { id: `evt_${chargeId}_2`, type: 'charge.refunded', chargeId, created: created + 10, amountRefunded: 500 }),
    connectEvent(account, { id: `evt_${chargeId}_3`, type: 'charge.refunded', chargeId, created: created + 20, amountRefunded: 2000 }),
  ].map((body, n) => ({ id: `evt_${chargeId}_${n + 1}`, body }));
}

describe('a destination filtered by account', () => {
  test("receives that account's payments only, each in sequence order", async () => {
    const created = Math.floor(Date.now() / 1000) - 600;
    const charges = [
      ...Array.from({ length: 4 }, (_, i) => ({ account: WANTED, chargeId: `ch_wanted_${i}` })),
      ...Array.from({ length: 4 }, (_, i) => ({ account: OTHER, chargeId: `ch_other_${i}` })),
      { account: undefined, chargeId: 'ch_direct_0' },
    ];
    const events = charges.flatMap(({ account, chargeId }) => historyOf(account, chargeId, created));
    // Each payment's events in order (so every change is an outbound event), the payments interleaved.
    const byPayment = charges.map(({ chargeId }) => events.filter((e) => e.id.startsWith(`evt_${chargeId}_`)));
    for (let step = 0; step < 3; step += 1) {
      for (const history of shuffled(byPayment, step + 1)) assert.equal((await postStripe(service.baseUrl, history[step]!.body, SECRET)).status, 200);
      await waitUntilSettled(
        database.sql,
        byPayment.map((h) => h[step]!.id),
      );
    }

    await waitFor(() => every.received.filter((e) => e.accepted).length === charges.length * 3, { message: 'every event at the unfiltered destination' });
    await waitFor(() => charges.filter((c) => c.account === WANTED).every((c) => only.acceptedFor(c.chargeId).length === 3), {
      message: "the wanted account's events",
    });

    const received = only.received.filter((e) => e.accepted);
    assert.deepEqual([...new Set(received.map((e) => e.account))], [WANTED], 'nothing of another account, nor of a direct integration');
    assert.equal(received.length, 4 * 3);
    for (const { chargeId } of charges.filter((c) => c.account === WANTED)) {
      assert.deepEqual(
        only.acceptedFor(chargeId).map((e) => e.sequence),
        [1, 2, 3],
        `${chargeId} in order`,
      );
    }
    assert.deepEqual([...new Set(every.received.map((e) => e.account ?? null))].sort(), [OTHER, WANTED, null].sort());
  });
});
