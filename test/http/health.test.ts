import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { adminDatabaseUrl } from '../support/env.ts';
import postgres from 'postgres';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_health_test';
const database = useTestDatabase();

const service = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, COMMIT_DEADLINE_MS: '3000' } });

/** Makes the service's database unreachable: refuse new connections and cut the open ones. */
async function cutDatabase(allow: boolean) {
  const admin = postgres(adminDatabaseUrl(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`alter database "${database.name}" allow_connections ${allow}`);
    if (!allow) {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${database.name} and pid <> pg_backend_pid()`;
    }
  } finally {
    await admin.end();
  }
}

test('/healthz answers 200 while the process lives', async () => {
  const response = await fetch(`${service.baseUrl}/healthz`);
  assert.equal(response.status, 200);
});

test('with the database unreachable: 503 with Retry-After, /readyz 503, no row; then it recovers', async () => {
  assert.equal((await fetch(`${service.baseUrl}/readyz`)).status, 200);
  await cutDatabase(false);
  try {
    const body = chargeEvent({ id: 'evt_during_outage', type: 'charge.succeeded', chargeId: 'ch_outage', created: Math.floor(Date.now() / 1000) });
    const response = await postStripe(service.baseUrl, body, SECRET);
    assert.equal(response.status, 503);
    assert.ok(Number(response.headers.get('retry-after')) > 0);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'storage_unavailable');
    assert.equal((await fetch(`${service.baseUrl}/readyz`)).status, 503);
  } finally {
    await cutDatabase(true);
  }
  const [row] = await database.sql`select count(*)::int as n from webhook_inbox where event_id = 'evt_during_outage'`;
  assert.equal(row!.n, 0, 'nothing was stored while the database was down');

  await waitFor(async () => (await fetch(`${service.baseUrl}/readyz`)).status === 200, { message: 'readiness after the outage' });
  const body = chargeEvent({ id: 'evt_during_outage', type: 'charge.succeeded', chargeId: 'ch_outage', created: Math.floor(Date.now() / 1000) });
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200, 'the gateway retry is accepted');
});
