import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import type { TestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { type PrivateCluster, startPrivateCluster } from './support/private-cluster.ts';

/**
 * The dashboard and /api/v1 read the database on every request. While PostgreSQL is down they
 * answer what the receiver and /readyz answer: 503 with Retry-After, a message about the database,
 * not a 500 whose message speaks of an event. A cluster of this file's own, stopped the way an
 * outage stops it (the shared test cluster must never be).
 */

const ADMIN_TOKEN = 'outage-admin-token-0123456789';
const API_TOKEN = 'outage-api-token-0123456789-0123456789';

let cluster: PrivateCluster;
let service: TestService;
const teardown: (() => Promise<unknown> | void)[] = [];

before(async () => {
  cluster = await startPrivateCluster();
  const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
  await admin`create database outage_test`;
  await admin.end();
  const sql = postgres(cluster.urlFor('outage_test'), { max: 1, onnotice: () => {} });
  teardown.push(() => sql.end());
  const database = {
    url: cluster.urlFor('outage_test'),
    name: 'outage_test',
    sql,
    onTeardown: (close) => void teardown.push(close),
    connect: () => assert.fail('not used'),
  } satisfies TestDatabase;
  service = await startTestService({
    database,
    env: {
      INBOX_ROLE: 'receiver',
      WEBHOOK_SECRET_STRIPE: 'whsec_outage_operator',
      INBOX_ADMIN_TOKEN: ADMIN_TOKEN,
      INBOX_API_TOKEN: API_TOKEN,
      DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
    },
  });
});

after(async () => {
  for (const close of teardown.reverse()) await close();
  await cluster?.destroy();
});

test('while PostgreSQL is down, /dashboard and /api/v1 answer 503 database_unavailable with Retry-After; back to 200 after the restart', async () => {
  const requests: [string, RequestInit][] = [
    ['/dashboard', {}],
    ['/api/v1/payment-events', { headers: { authorization: `Bearer ${API_TOKEN}` } }],
  ];
  for (const [path, init] of requests) assert.equal((await fetch(`${service.baseUrl}${path}`, init)).status, 200, `${path} before the outage`);
  await cluster.stop('immediate');
  try {
    for (const [path, init] of requests) {
      const response = await fetch(`${service.baseUrl}${path}`, init);
      const body = await response.text();
      assert.equal(response.status, 503, `${path}: ${body}`);
      assert.ok(Number(response.headers.get('retry-after')) > 0, `${path} says when to retry`);
      assert.equal(JSON.parse(body).error.code, 'database_unavailable', path);
      assert.doesNotMatch(body, /event/, `${path}: the message is about the database, not an event`);
    }
  } finally {
    await cluster.start();
  }
  for (const [path, init] of requests) assert.equal((await fetch(`${service.baseUrl}${path}`, init)).status, 200, `${path} after the restart`);
});
