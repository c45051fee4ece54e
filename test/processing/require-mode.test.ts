import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { useService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { SECRET, inboxRows, paymentOf, transitionsOf, waitUntilSettled } from './harness.ts';

const MAX_ATTEMPTS = 4;
const database = useTestDatabase();
const now = Math.floor(Date.now() / 1000);

const service = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_CONFIG: '/inbox.json' },
  files: { '/inbox.json': JSON.stringify({ providers: { stripe: { driver: 'stripe', unknownPayment: 'require' } } }) },
  worker: { maxAttempts: MAX_ATTEMPTS },
});

/** What the merchant's application does after the gateway's synchronous answer. */
async function applicationCreatesPayment(chargeId: string, status: string): Promise<void> {
  await database.sql`insert into payments (provider, gateway_charge_id, status, amount, currency) values ('stripe', ${chargeId}, ${status}, 2000, 'BRL')`;
}

async function post(id: string, type: string, chargeId: string, createdOffset = 0, amountRefunded?: number) {
  const response = await postStripe(service.baseUrl, chargeEvent({ id, type, chargeId, created: now + createdOffset, amountRefunded }), SECRET);
  assert.equal(response.status, 200);
}

describe('unknownPayment: require', () => {
  test('a webhook that beats the application is retried, then applied once the payment row appears', async () => {
    await post('evt_req_early', 'charge.succeeded', 'ch_req_early');
    const failedOnce = await waitFor(
      async () => {
        const [row] = await inboxRows(database.sql, ['evt_req_early']);
        return row && row.attempts >= 1 ? row : undefined;
      },
      { message: 'a failed attempt to be recorded' },
    );
    assert.equal(failedOnce.status, 'pending', 'still waiting for its retry');
    assert.match(failedOnce.lastError ?? '', /^PaymentNotYetKnown: No payment for stripe charge ch_req_early/);
    assert.equal(await paymentOf(database.sql, 'ch_req_early'), undefined, 'require mode never creates the payment');

    await applicationCreatesPayment('ch_req_early', 'pending');
    const [row] = await waitUntilSettled(database.sql, ['evt_req_early']);
    assert.equal(row!.status, 'processed');
    assert.equal(row!.lastError, null);
    assert.ok(row!.attempts >= 2 && row!.attempts <= MAX_ATTEMPTS, `attempts ${row!.attempts}`);
    assert.equal((await paymentOf(database.sql, 'ch_req_early'))!.status, 'paid');
    const [decided] = await database.sql`select decision, decision_detail from webhook_inbox where event_id = 'evt_req_early'`;
    assert.deepEqual({ ...decided }, { decision: 'applied', decision_detail: { from: 'pending', to: 'paid' } }, 'the retry that applied it decides afresh');
    assert.deepEqual(await transitionsOf(database.sql, 'ch_req_early'), [{ inboxId: row!.id, from: 'pending', to: 'paid' }]);
  });

  test('a webhook whose payment never appears ends failed, with every attempt counted and the reason kept', async () => {
    await post('evt_req_never', 'charge.succeeded', 'ch_req_never');
    const [row] = await waitUntilSettled(database.sql, ['evt_req_never'], 30_000);
    assert.equal(row!.status, 'failed');
    assert.equal(row!.attempts, MAX_ATTEMPTS);
    assert.match(row!.lastError ?? '', /^PaymentNotYetKnown: /);
    const [decided] = await database.sql`select decision, decision_detail from webhook_inbox where event_id = 'evt_req_never'`;
    assert.deepEqual({ ...decided }, { decision: 'unknown_payment', decision_detail: { chargeId: 'ch_req_never' } });
  });

  test('the fold starts from the row the application created: a late pending never demotes its paid', async () => {
    await applicationCreatesPayment('ch_req_paid', 'paid');
    await post('evt_req_paid_pending', 'charge.pending', 'ch_req_paid', 0);
    const [pending] = await waitUntilSettled(database.sql, ['evt_req_paid_pending']);
    assert.equal(pending!.status, 'ignored');
    assert.equal((await paymentOf(database.sql, 'ch_req_paid'))!.status, 'paid');

    await post('evt_req_paid_refund', 'charge.refunded', 'ch_req_paid', 5, 2000);
    const [refund] = await waitUntilSettled(database.sql, ['evt_req_paid_refund']);
    assert.equal(refund!.status, 'processed');
    const payment = await paymentOf(database.sql, 'ch_req_paid');
    assert.deepEqual([payment!.status, payment!.amountRefunded], ['refunded', 2000]);
    const [initial] = await database.sql`select initial_status from payments where gateway_charge_id = 'ch_req_paid'`;
    assert.equal(initial!.initial_status, 'paid', 'later folds start from what the application created');
  });
});
