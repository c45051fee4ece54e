import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { runInboxctl } from './run-inboxctl.ts';

const SECRET = 'whsec_cli_conflicts';
const database = useTestDatabase();
let service: TestService;
let env: Record<string, string>;
const created = Math.floor(Date.now() / 1000) - 60;
const succeeded = chargeEvent({ id: 'evt_cli_conflict', type: 'charge.succeeded', chargeId: 'ch_cli_conflict', created });
const refunded = chargeEvent({ id: 'evt_cli_conflict', type: 'charge.refunded', chargeId: 'ch_cli_conflict', created, amountRefunded: 2000 });
const failed = chargeEvent({ id: 'evt_cli_other', type: 'charge.failed', chargeId: 'ch_cli_other', created });
const plain = chargeEvent({ id: 'evt_cli_plain', type: 'charge.succeeded', chargeId: 'ch_cli_plain', created });

setup(async () => {
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  // Real deliveries through the real service; inboxctl then reads what they left.
  service = await startTestService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET } });
  for (const body of [succeeded, refunded, succeeded, refunded, failed, plain, plain])
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
  // The other event's conflict happened long ago: outside a 1 h window.
  await database.sql`insert into webhook_inbox_conflicts (inbox_id, inbox_received_at, provider, event_id, fingerprint, differences, raw_body, received_at)
    select id, received_at, provider, event_id, 'f', '[]', '\\x7b7d', now() - interval '2 days' from webhook_inbox where event_id = 'evt_cli_other'`;
});

describe('inboxctl and conflicting duplicates', () => {
  test("show lists the stored event's conflicts: when, how many bytes, each field stored → received", async () => {
    const run = await runInboxctl(['show', 'stripe', 'evt_cli_conflict'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.out, /type\s+charge\.succeeded/, 'the stored event is the first body');
    assert.match(run.out, /conflicting duplicates {2}2 \(answered 200, not processed; bodies exact in --json\)/);
    assert.match(run.out, new RegExp(`#\\d+  received \\S+ \\(.* ago\\), ${Buffer.byteLength(refunded)} bytes`));
    assert.match(run.out, /eventType\s+"charge\.succeeded" → "charge\.refunded"/);
    assert.match(run.out, /status\s+"paid" → "refunded"/);
    assert.match(run.out, /amountRefunded\s+0 → 2000/);
  });

  test("show --json carries each conflict's exact bytes and differences", async () => {
    const shown = (await runInboxctl(['show', 'stripe', 'evt_cli_conflict', '--json'], env)).json();
    assert.equal(shown.conflicts.length, 2);
    for (const conflict of shown.conflicts) {
      assert.ok(Buffer.from(conflict.rawBodyBase64, 'base64').equals(Buffer.from(refunded)));
      assert.deepEqual(
        conflict.differences.map((d: { field: string }) => d.field),
        ['eventType', 'status', 'amountRefunded'],
      );
    }
  });

  test('an event whose resends all said the same shows none', async () => {
    const run = await runInboxctl(['show', 'stripe', 'evt_cli_plain'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.out, /^ {2}conflicting duplicates {2}none$/m);
  });

  test('stats counts conflicts per provider in the window and names the latest event, without changing the exit code', async () => {
    const lastHour = await runInboxctl(['stats', '--since', '1h'], env);
    assert.equal(lastHour.code, 0, lastHour.out);
    assert.match(lastHour.out, /^Conflicting duplicates in the window: 2 \(same id, something else said; answered 200, not processed\)\.$/m);
    assert.match(lastHour.out, /^ {7}2× stripe: latest evt_cli_conflict \(inboxctl show stripe evt_cli_conflict\)$/m);
    const allTime = (await runInboxctl(['stats', '--since', 'all', '--json'], env)).json();
    assert.deepEqual(allTime.conflictingDuplicates, [{ provider: 'stripe', count: 3, latestEventId: 'evt_cli_conflict' }]);
    assert.equal(allTime.providers.find((p: { provider: string }) => p.provider === 'stripe').conflictingDuplicates, 3);
    // A configured provider with no conflicts (an unknown one is a usage error since inboxctl checks names).
    const none = await runInboxctl(['stats', '--provider', 'asaas'], { ...env, WEBHOOK_SECRET_ASAAS: 'asaas-token-for-cli-test' });
    assert.match(none.out, /^Conflicting duplicates in the window: none\.$/m);
  });
});
