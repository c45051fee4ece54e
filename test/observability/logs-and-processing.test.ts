import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { SWEEP_QUEUE } from '../../src/operations/cron.ts';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { paymentsHandler } from '../support/handlers.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { chargeEvent, postStripe, stripeSignature } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { sampleValue, scrape } from './prometheus-text.ts';

const SECRET = 'whsec_log_test_secret_must_never_be_logged';
// A value only the payload carries: if it shows up in a log line, a body was logged.
const PAYLOAD_MARKER = 'customer-pii-7f3a9c@example.com';
const { lines, destination } = logLineCapture();
const database = useTestDatabase();

class DownstreamUnavailable extends Error {
  readonly code = 'downstream_unavailable';
}

// Customer events have no built-in handler; this one always fails, so retries run out.
const failingCustomerHandler: EventHandler = {
  name: 'failing-customers',
  kinds: ['stripe:customer.created'],
  async apply() {
    throw new DownstreamUnavailable('the CRM did not answer');
  },
};

const now = () => Math.floor(Date.now() / 1000);
function withMarker(body: string): string {
  const event = JSON.parse(body);
  event.data.object.receipt_email = PAYLOAD_MARKER;
  return JSON.stringify(event);
}

async function settled(eventId: string, statuses: string[]) {
  return waitFor(
    async () => {
      const [row] = await database.sql`select id, status from webhook_inbox where event_id = ${eventId}`;
      return row && statuses.includes(row.status) ? { id: Number(row.id), status: row.status as string } : undefined;
    },
    { message: `${eventId} to reach ${statuses.join('/')}`, timeoutMs: 30_000 },
  );
}

const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

const service = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET, WORKER_MAX_ATTEMPTS: '2', INBOX_ADMIN_TOKEN: 'admin-token-for-log-test-0123' },
  logger: createLogger('debug', destination),
  handlers: createHandlerRegistry([paymentsHandler as EventHandler, failingCustomerHandler]),
});

describe('logs and processing metrics after real deliveries', () => {
  let paid: { id: number; status: string };
  let failed: { id: number; status: string };

  before(async () => {
    const paidBody = withMarker(chargeEvent({ id: 'evt_log_paid', type: 'charge.succeeded', chargeId: 'ch_log_1', created: now() }));
    const customerBody = JSON.stringify({
      id: 'evt_log_customer',
      object: 'event',
      type: 'customer.created',
      created: now(),
      data: { object: { id: 'cus_log_1', object: 'customer', email: PAYLOAD_MARKER } },
    });
    assert.equal((await postStripe(service.baseUrl, paidBody, SECRET)).status, 200);
    assert.equal((await postStripe(service.baseUrl, paidBody, SECRET)).status, 200, 'a duplicate');
    assert.equal((await postStripe(service.baseUrl, customerBody, SECRET)).status, 200);
    const forged = stripeSignature(paidBody, 'whsec_someone_else');
    assert.equal((await postStripe(service.baseUrl, paidBody, SECRET, { signature: forged })).status, 401);
    paid = await settled('evt_log_paid', ['processed', 'ignored']);
    failed = await settled('evt_log_customer', ['failed']);
    // The dead-letter worker logs the final failure after it has marked the row.
    await waitFor(() => parsed().some((l) => l.inboxId === failed.id && l.level === 50), { message: 'the final-failure log line' });
  });

  test('no line carries a secret, a signature or a payload body', () => {
    if (process.env.SHOW_LOGS) console.log(lines.join('\n'));
    assert.ok(lines.length >= 8, `captured ${lines.length} lines`);
    const all = lines.join('\n');
    assert.ok(!all.includes(SECRET), 'the webhook secret');
    assert.ok(!all.includes('whsec_'), 'any webhook secret');
    assert.ok(!all.includes('admin-token-for-log-test'), 'the admin token');
    assert.ok(!all.includes(PAYLOAD_MARKER), 'payload content');
    const signatureValue = /v1=([0-9a-f]{64})/;
    assert.ok(!signatureValue.test(all), 'a Stripe signature');
  });

  test('every line of a delivery carries its request id', () => {
    const deliveries = parsed().filter((l) => l.msg === 'delivery stored' || l.msg === 'delivery rejected');
    assert.equal(deliveries.length, 4, 'accepted, duplicate, accepted, rejected');
    for (const line of deliveries) assert.equal(typeof line.requestId, 'string', JSON.stringify(line));
    assert.equal(new Set(deliveries.map((l) => l.requestId)).size, 4, 'one id per request');
  });

  test("every line of an event's processing carries its inbox row id", () => {
    const processing = parsed().filter(
      (l) => typeof l.msg === 'string' && /processing|failed after its last attempt/.test(l.msg) && l.msg !== 'processing webhooks',
    );
    assert.ok(processing.length >= 2, 'two failed attempts and the final failure');
    for (const line of processing) assert.equal(line.inboxId, failed.id, JSON.stringify(line));
  });

  test('/metrics counts attempts, failures by error class and the processing latency', async () => {
    const text = await scrape(service.baseUrl);
    assert.equal(sampleValue(text, 'inbox_processing_attempts_total', { provider: 'stripe' }), 3, 'one for the charge, two for the customer');
    assert.equal(sampleValue(text, 'inbox_processing_failures_total', { provider: 'stripe', error_class: 'downstream_unavailable' }), 2);
    assert.equal(sampleValue(text, 'inbox_events_settled_total', { provider: 'stripe', status: paid.status }), 1);
    assert.equal(sampleValue(text, 'inbox_processing_latency_seconds_count', { provider: 'stripe', status: paid.status }), 1);
  });

  test('/metrics counts sweeper runs and the events they re-queued', async () => {
    // A pending row whose job was lost, old enough for the sweeper.
    const body = chargeEvent({ id: 'evt_log_lost', type: 'charge.succeeded', chargeId: 'ch_log_lost', created: now() });
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at)
      values ('stripe', 'evt_log_lost', 'charge.succeeded', 'ch_log_lost', ${JSON.parse(body)}::jsonb, ${Buffer.from(body)},
              now() - interval '10 minutes', now() - interval '10 minutes')`;
    await service.boss.send(SWEEP_QUEUE, {});
    const text = await waitFor(
      async () => {
        const text = await scrape(service.baseUrl);
        return sampleValue(text, 'inbox_sweeper_runs_total', { outcome: 'ok' }) === 1 ? text : undefined;
      },
      { message: 'a sweeper run in /metrics' },
    );
    assert.equal(sampleValue(text, 'inbox_sweeper_requeued_events_total', {}), 1);
    await settled('evt_log_lost', ['processed']);
  });
});
