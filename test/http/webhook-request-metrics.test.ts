import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StorageUnavailableError } from '../../src/errors.ts';
import { createApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService, startTestService } from '../support/service.ts';
import { chargeEvent, postStripe, stripeSignature } from '../support/stripe.ts';
import { sampleValue, scrape } from '../observability/prometheus-text.ts';

const SECRET = 'whsec_metrics_test_secret';
const database = useTestDatabase();

function event(n: number) {
  return chargeEvent({ id: `evt_metrics_${n}`, type: 'charge.succeeded', chargeId: `ch_metrics_${n}`, created: Math.floor(Date.now() / 1000) });
}

const service = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, MAX_BODY_BYTES: '4096' } });

describe('GET /metrics after real signed webhook requests', () => {
  test('counts each webhook request by provider and outcome, and times every answer', async () => {
    assert.equal((await postStripe(service.baseUrl, event(1), SECRET)).status, 200);
    assert.equal((await postStripe(service.baseUrl, event(2), SECRET)).status, 200);
    assert.equal((await postStripe(service.baseUrl, event(1), SECRET)).status, 200, 'a resend');
    assert.equal((await postStripe(service.baseUrl, event(3), 'whsec_wrong')).status, 401);
    assert.equal((await postStripe(service.baseUrl, '{"not":"an event"}', SECRET)).status, 400);
    assert.equal((await postStripe(service.baseUrl, event(4), SECRET, { provider: 'no-such-gateway' })).status, 404);
    const big = JSON.stringify({ id: 'evt_big', padding: 'x'.repeat(5000) });
    assert.equal((await postStripe(service.baseUrl, big, SECRET, { signature: stripeSignature(big, SECRET) })).status, 413);

    const response = await fetch(`${service.baseUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const requests = (provider: string, outcome: string) => sampleValue(text, 'webhook_requests_total', { provider, outcome });
    assert.equal(requests('stripe', 'accepted'), 2);
    assert.equal(requests('stripe', 'duplicate'), 1);
    assert.equal(requests('stripe', '401'), 1);
    assert.equal(requests('stripe', '400'), 1);
    assert.equal(requests('stripe', '413'), 1);
    // The path is the sender's to choose: an unconfigured name never becomes a label value.
    assert.equal(requests('unknown', '404'), 1);
    // The counter's name before the rename is emitted too, for one release, with the same values.
    for (const [provider, outcome] of [
      ['stripe', 'accepted'],
      ['stripe', 'duplicate'],
      ['stripe', '401'],
      ['unknown', '404'],
    ] as const) {
      assert.equal(sampleValue(text, 'webhook_deliveries_total', { provider, outcome }), requests(provider, outcome), `${provider} ${outcome}`);
    }
    assert.ok(!text.includes('no-such-gateway'));
    assert.equal(sampleValue(text, 'webhook_ack_duration_seconds_count', { provider: 'stripe', outcome: 'accepted' }), 2);
    assert.equal(sampleValue(text, 'webhook_ack_duration_seconds_bucket', { provider: 'stripe', outcome: 'accepted', le: '+Inf' }), 2);
  });

  test('exposes every metric family the README lists, including the ones later features fill', async () => {
    const text = await scrape(service.baseUrl);
    for (const family of [
      'webhook_requests_total',
      'webhook_deliveries_total',
      'webhook_ack_duration_seconds',
      'webhook_conflicting_duplicates_total',
      'inbox_events',
      'inbox_events_received_last_hour',
      'inbox_oldest_pending_age_seconds',
      'inbox_last_webhook_request_timestamp_seconds',
      'inbox_last_delivery_timestamp_seconds',
      'inbox_processing_latency_seconds',
      'inbox_processing_attempts_total',
      'inbox_processing_failures_total',
      'inbox_events_settled_total',
      'inbox_refetch_calls_total',
      'inbox_refetch_breaker_state',
      'inbox_sweeper_runs_total',
      'inbox_retention_runs_total',
      'pgboss_queue_jobs',
      'inbox_worker_batch_events',
      'inbox_worker_yield_pauses_total',
      'inbox_worker_yield_seconds_total',
      'inbox_ingest_pressure',
      'process_cpu_seconds_total',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${family} `, 'm'), family);
    }
  });

  test('a webhook request the database could not commit is counted as 503', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const config = testConfig({ WEBHOOK_SECRET_STRIPE: SECRET });
    const app = createApp({
      driverFor: (provider) => config.providers.get(provider)?.driver,
      ingestor: { ingest: () => Promise.reject(new StorageUnavailableError('database down')) },
      maxBodyBytes: config.maxBodyBytes,
      clock: () => new Date(),
      logger: createLogger('silent'),
      metrics,
      pingDatabase: async () => {},
      readinessTimeoutMs: 1000,
      isAcceptingTraffic: () => true,
    });
    const body = event(5);
    const response = await app.request('/webhooks/stripe', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, SECRET) },
    });
    assert.equal(response.status, 503);
    const text = await metrics.registry.metrics();
    assert.equal(sampleValue(text, 'webhook_requests_total', { provider: 'stripe', outcome: '503' }), 1);
    assert.equal(sampleValue(text, 'webhook_requests_total', { provider: 'stripe', outcome: 'accepted' }), undefined);
  });

  test('a worker-only instance serves /metrics and health checks, and no webhooks', async () => {
    const worker = await startTestService({ database, env: { INBOX_ROLE: 'worker', WEBHOOK_SECRET_STRIPE: SECRET } });
    try {
      const base = `http://127.0.0.1:${worker.port}`;
      assert.match(await scrape(base), /^# TYPE inbox_processing_attempts_total counter$/m);
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      assert.equal((await postStripe(base, event(6), SECRET)).status, 404);
      const [row] = await database.sql`select count(*)::int as n from webhook_inbox where event_id = 'evt_metrics_6'`;
      assert.equal(row!.n, 0);
    } finally {
      await worker.stop();
    }
  });
});
