/**
 * The contract cannot drift: the committed JSON Schema is what the zod schema generates, real
 * bodies made from rows the payments handler wrote validate against the committed file with an
 * independent validator (ajv, draft 2020-12), they carry no field the schema leaves out, and the
 * OpenAPI description embeds the same schema.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../src/api/openapi.ts';
import { PAYMENT_EVENT_SCHEMA_PATH, paymentEventSchemaFileText } from '../../src/api/write-payment-event-schema.ts';
import { type DatabaseHandle, connectDatabase } from '../../src/db/client.ts';
import { paymentEvents } from '../../src/domain/payments/schema.ts';
import { type PaymentEventBody, toPaymentEventBody, toPushedEventBody } from '../../src/delivery/payment-event-body.ts';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { processBatch } from '../../src/processing/process-batch.ts';
import { scenarioArb, stripeEvents } from '../domain/charge-scenarios.ts';
import { SECRET, storeEvent } from '../processing/harness.ts';
import { builtInHandlers } from '../support/handlers.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import fc from 'fast-check';

const committed = JSON.parse(readFileSync(PAYMENT_EVENT_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
const database = useTestDatabase();
let handle: DatabaseHandle;
let bodies: PaymentEventBody[];

/** Every status the state machine can reach, from enough random histories processed for real. */
setup(async () => {
  handle = connectDatabase({ url: database.url, poolSize: 2, connectTimeoutSeconds: 5, applicationName: 'payment-event-schema-test' });
  const deps = { db: handle.db, providers: testConfig({ WEBHOOK_SECRET_STRIPE: SECRET }).providers, handlers: createHandlerRegistry(builtInHandlers) };
  for (const [n, scenario] of fc.sample(scenarioArb, { numRuns: 60, seed: 13 }).entries()) {
    for (const event of stripeEvents(scenario, `ch_schema_${n}`, 1_760_000_000)) {
      const results = await processBatch(deps, [{ inboxId: await storeEvent(database.sql, event) }]);
      for (const result of results) if ('error' in result) throw result.error;
    }
  }
  const rows = await handle.db.select().from(paymentEvents);
  // As the feed serves them, and as a destination gets them (what it was sent before: here after a skip of the one before).
  bodies = [...rows.map(toPaymentEventBody), ...rows.map((row) => toPushedEventBody(row, Math.max(0, row.sequence - 2)))];
});

setup(() => {
  database.onTeardown(() => handle?.close());
});

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats.default(ajv);
  return ajv.compile(committed);
}

/** Each object's keys, with the schema's `properties` at the same place, so a field the schema omits shows. */
function unknownFields(value: Record<string, unknown>, schema: Record<string, unknown>, path = ''): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(value).flatMap(([key, field]) => {
    if (!(key in properties)) return [`${path}${key}`];
    return field !== null && typeof field === 'object' ? unknownFields(field as Record<string, unknown>, properties[key]!, `${path}${key}.`) : [];
  });
}

describe('the payment event contract', () => {
  test(`${PAYMENT_EVENT_SCHEMA_PATH} is what the zod schema generates (npm run contract:schema rewrites it)`, () => {
    assert.equal(readFileSync(PAYMENT_EVENT_SCHEMA_PATH, 'utf8'), paymentEventSchemaFileText());
  });

  test('bodies from real payment_events rows, every status among them, validate against the committed schema and carry no field it omits', () => {
    const validate = validator();
    assert.deepEqual(
      new Set(bodies.map((b) => b.payment.status)),
      new Set(['pending', 'authorized', 'paid', 'failed', 'canceled', 'refunded', 'partially_refunded', 'disputed', 'charged_back']),
    );
    for (const body of bodies) {
      const wire = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
      assert.ok(validate(wire), `${JSON.stringify(validate.errors)} for ${JSON.stringify(wire)}`);
      assert.deepEqual(unknownFields(wire, committed), [], JSON.stringify(wire));
    }
  });

  test('the schema refuses a body that breaks the contract (the validation above can fail)', () => {
    const validate = validator();
    const good = JSON.parse(JSON.stringify(bodies[0])) as PaymentEventBody;
    const broken: unknown[] = [
      { ...good, sequence: 0 },
      { ...good, follows_sequence: -1 },
      { ...good, follows_sequence: '1' },
      { ...good, type: 'payment.unknown' },
      { ...good, occurred_at: 'yesterday' },
      { ...good, payment: { ...good.payment, amount: 10.5 } },
      { ...good, payment: { ...good.payment, status: 'succeeded' } },
      { ...good, cause: { inbox_id: good.cause.inbox_id, event_id: good.cause.event_id } },
      (({ id: _id, ...rest }) => rest)(good),
    ];
    for (const body of broken) assert.equal(validate(body), false, JSON.stringify(body));
  });

  test('the OpenAPI description embeds the same schema as PaymentEvent', () => {
    const { $schema: _schema, ...schema } = committed;
    const components = (openApiDocument().components as { schemas: Record<string, unknown> }).schemas;
    assert.deepEqual(components.PaymentEvent, schema);
  });
});
