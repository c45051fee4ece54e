import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Stripe from 'stripe';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { postStripe } from '../support/stripe.ts';
import { fixtureCharge, fixtureEventBody } from '../support/stripe-objects.ts';
import { SECRET, outboundEventsOf, paymentOf, waitUntilSettled } from './harness.ts';

// A payment never holds more refunded than its amount. Stripe's own objects never say so; these
// are built on its published example charge with an amount_refunded past the amount, as a payload
// of another gateway (refunds that add up past the charge) or a corrupted one would, signed by the
// official SDK and posted to the real service one at a time.
const database = useTestDatabase();
const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET } });

const BASE = Math.floor(Date.now() / 1000) - 30 * 86_400;
const DAY = 86_400;
const AMOUNT = 4990;

async function deliver(id: string, type: Stripe.Event.Type, atSecond: number, object: Stripe.Charge): Promise<void> {
  const response = await postStripe(service.baseUrl, fixtureEventBody(id, type, BASE + atSecond, object), SECRET);
  assert.equal(response.status, 200, await response.text());
  await waitUntilSettled(database.sql, [id]);
}

function charge(pi: string, fields: Partial<Stripe.Charge>): Stripe.Charge {
  return fixtureCharge({
    id: `ch_${pi.slice(3)}`,
    payment_intent: pi,
    amount: AMOUNT,
    amount_captured: AMOUNT,
    captured: true,
    amount_refunded: 0,
    currency: 'brl',
    ...fields,
  });
}

async function decisionOf(eventId: string) {
  const [row] = await database.sql`select status, decision, decision_detail from webhook_inbox where provider = 'stripe' and event_id = ${eventId}`;
  return { status: row?.status, decision: row?.decision, detail: row?.decision_detail };
}

async function refusedRefunds(): Promise<number | undefined> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('inbox_rejected_money_events_total{provider="stripe",kind="payment.refunded"} '));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('a refund larger than the payment is refused, and says why', () => {
  test('a paid payment stays paid when a refund says more was refunded than paid: the event is rejected_amount, and counted as a refused refund', async () => {
    const pi = 'pi_refund_past_amount';
    await deliver('evt_over_1', 'charge.succeeded', 0, charge(pi, {}));
    await deliver('evt_over_2', 'charge.refunded', DAY, charge(pi, { refunded: true, amount_refunded: AMOUNT + 1 }));
    const payment = await paymentOf(database.sql, pi);
    assert.deepEqual([payment?.status, payment?.amount, payment?.amountRefunded], ['paid', AMOUNT, 0]);
    assert.deepEqual(await decisionOf('evt_over_2'), {
      status: 'ignored',
      decision: 'rejected_amount',
      detail: { status: 'refunded', amount: AMOUNT, amountRefunded: AMOUNT + 1, occurredAt: new Date((BASE + DAY) * 1000).toISOString() },
    });
    assert.equal(await refusedRefunds(), 1);
    assert.deepEqual(
      (await outboundEventsOf(database.sql, pi)).map((e) => e.status),
      ['paid'],
      'the application is told nothing impossible',
    );
  });

  test('an impossible first event creates no payment', async () => {
    const pi = 'pi_first_refund_past_amount';
    await deliver('evt_over_first', 'charge.refunded', 0, charge(pi, { refunded: true, amount_refunded: 2 * AMOUNT }));
    assert.equal(await paymentOf(database.sql, pi), undefined);
    assert.equal((await decisionOf('evt_over_first')).decision, 'rejected_amount');
  });

  test('a later, correct refund applies as usual', async () => {
    const pi = 'pi_refund_past_amount';
    await deliver('evt_over_3', 'charge.refunded', 2 * DAY, charge(pi, { refunded: true, amount_refunded: AMOUNT }));
    const payment = await paymentOf(database.sql, pi);
    assert.deepEqual([payment?.status, payment?.amountRefunded], ['refunded', AMOUNT]);
  });
});
