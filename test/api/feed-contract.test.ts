/**
 * What /api/v1 answers over a real socket, checked against what it promises: every feed page and
 * payment lookup validates against the OpenAPI description the service serves, and every event in
 * them against the committed contract (docs/payment-event.schema.json), with an independent
 * validator (ajv, draft 2020-12) — also when the gateway's payload carries odd values.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PAYMENT_EVENT_SCHEMA_PATH } from '../../src/api/write-payment-event-schema.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { API_TOKEN } from './feed-client.ts';

const database = useTestDatabase();
const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_API_TOKEN: API_TOKEN } });
const auth = { authorization: `Bearer ${API_TOKEN}` };

/** A charge whose `currency` is what a sender may put there, not only an ISO 4217 code. */
const currencies: Record<string, unknown> = { ch_cur_ok: 'brl', ch_cur_empty: '', ch_cur_long: 'euro', ch_cur_digits: '986', ch_cur_number: 986 };

function withCurrency(body: string, currency: unknown): string {
  const event = JSON.parse(body) as { data: { object: Record<string, unknown> } };
  event.data.object.currency = currency;
  return JSON.stringify(event);
}

const eventIds = Object.keys(currencies).map((chargeId) => `evt_${chargeId}`);

setup(async () => {
  for (const [chargeId, currency] of Object.entries(currencies)) {
    const body = withCurrency(chargeEvent({ id: `evt_${chargeId}`, type: 'charge.succeeded', chargeId, created: 1_760_000_000 }), currency);
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
  }
});

async function served() {
  const document = (await (await fetch(`${service.baseUrl}/api/v1/openapi.json`)).json()) as { components: Record<string, unknown> };
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components });
  const component = (name: string) => ajv.getSchema(`openapi#/components/schemas/${name}`)!;
  const contract = ajv.compile(JSON.parse(readFileSync(PAYMENT_EVENT_SCHEMA_PATH, 'utf8')) as Record<string, unknown>);
  return { component, contract };
}

const get = async (path: string) => {
  const response = await fetch(`${service.baseUrl}${path}`, { headers: auth });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('the API answers what it describes', () => {
  test('a gateway payload with a currency that is no ISO 4217 code: the event is processed, and the feed and the lookup still fit the contract (currency null)', async () => {
    const rows = await waitUntilSettled(database.sql, eventIds);
    assert.deepEqual(
      rows.map((r) => [r.eventId, r.status, r.lastError]),
      eventIds.map((id) => [id, 'processed', null]),
    );
    const { component, contract } = await served();
    const page = await waitFor(
      async () => {
        const answer = await get('/api/v1/payment-events?limit=1000');
        return (answer.body.events as unknown[]).length === eventIds.length ? answer : undefined;
      },
      { message: 'the feed to show every event' },
    );
    assert.equal(page.status, 200);
    assert.ok(component('PaymentEventsPage')(page.body), JSON.stringify(component('PaymentEventsPage').errors));
    for (const event of page.body.events as Record<string, unknown>[])
      assert.ok(contract(event), `${JSON.stringify(contract.errors)} for ${JSON.stringify(event)}`);

    const byCharge = Object.fromEntries(
      (page.body.events as { payment: { charge_id: string; currency: string | null } }[]).map((e) => [e.payment.charge_id, e.payment.currency]),
    );
    assert.deepEqual(byCharge, { ch_cur_ok: 'BRL', ch_cur_empty: null, ch_cur_long: null, ch_cur_digits: null, ch_cur_number: null });

    for (const chargeId of Object.keys(currencies)) {
      const lookup = await get(`/api/v1/payments/stripe/${chargeId}`);
      assert.equal(lookup.status, 200, chargeId);
      assert.ok(component('Payment')(lookup.body), `${chargeId}: ${JSON.stringify(component('Payment').errors)}`);
    }
  });
});
