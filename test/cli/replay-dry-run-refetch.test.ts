import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent } from '../support/stripe.ts';
import { runInboxctl } from './run-inboxctl.ts';

// Stripe with an API key: refunds and disputes are ordered by refetch (re-read from the gateway,
// here a fake one on 127.0.0.1 that records every request), payments by occurred_at.
const database = useTestDatabase();
let gateway: FakeGateway;
let env: Record<string, string>;
const created = Math.floor(Date.now() / 1000) - 3600;
const snapshotObservedAt = new Date((created + 30) * 1000).toISOString();

setup(async () => {
  gateway = await startFakeGateway();
  const folder = await mkdtemp(path.join(tmpdir(), 'dry-run-refetch-'));
  const file = path.join(folder, 'inbox.json');
  await writeFile(file, JSON.stringify({ providers: { stripe: { driver: 'stripe', api: { baseUrl: gateway.baseUrl } } } }));
  env = { DATABASE_URL: database.url, INBOX_CONFIG: file, WEBHOOK_SECRET_STRIPE: 'whsec_dry_run_refetch', GATEWAY_API_KEY_STRIPE: 'sk_test_dry_run_refetch' };
  database.onTeardown(async () => {
    await gateway.close();
    await rm(folder, { recursive: true, force: true });
  });
  const row = (eventId: string, type: string, chargeId: string, status: 'processed' | 'failed', at: number) => ({
    eventId,
    eventType: type,
    resourceId: chargeId,
    status,
    receivedAt: minutesAgo(60 - at),
    occurredAt: new Date((created + at) * 1000),
    rawBody: Buffer.from(chargeEvent({ id: eventId, type, chargeId, created: created + at, amountRefunded: type === 'charge.refunded' ? 2000 : 0 })),
  });
  const [refetched] = await insertInboxRows(database.sql, [
    // ch_snap's refund was processed from a gateway read, kept on its row as a snapshot.
    row('evt_snap_refund', 'charge.refunded', 'ch_snap', 'processed', 20),
    row('evt_snap_dispute', 'charge.dispute.created', 'ch_snap', 'failed', 40),
    // ch_payload: no read of it was ever kept.
    row('evt_payload_refund', 'charge.refunded', 'ch_payload', 'failed', 20),
    // ch_plain: charge.succeeded is ordered by occurred_at: nothing to re-read.
    row('evt_plain_paid', 'charge.succeeded', 'ch_plain', 'failed', 10),
  ]);
  const snapshot = {
    chargeId: 'ch_snap',
    status: 'refunded',
    occurredAt: snapshotObservedAt,
    amount: 2000,
    amountRefunded: 2000,
    currency: 'BRL',
    snapshot: true,
  };
  await database.sql`update webhook_inbox set fact = ${database.sql.json(snapshot)}, processed_at = now() where id = ${refetched!}`;
});

describe('inboxctl replay --dry-run with refetch-ordered kinds', () => {
  test('calls no gateway: a charge is predicted from the snapshot the inbox keeps, else from the payload, and says which', async () => {
    const dry = await runInboxctl(['replay', 'stripe', '--dry-run', '--json'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(gateway.requests, [], 'no request reached the gateway');
    const events = Object.fromEntries(
      dry
        .json()
        .prediction.events.map((e: { eventId: string; outcome: string; refetch?: { from: string; observedAt?: string }; decision?: { decision: string } }) => [
          e.eventId,
          { outcome: e.outcome, decision: e.decision?.decision, refetch: e.refetch },
        ]),
    );
    assert.deepEqual(events, {
      evt_snap_dispute: { outcome: 'processed', decision: 'refetched', refetch: { from: 'stored_snapshot', observedAt: snapshotObservedAt } },
      evt_payload_refund: { outcome: 'processed', decision: 'applied', refetch: { from: 'payload' } },
      evt_plain_paid: { outcome: 'processed', decision: 'applied', refetch: undefined },
    });

    const text = await runInboxctl(['replay', 'stripe', '--dry-run'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.out, new RegExp(`^evt_snap_dispute .* snapshot of ${snapshotObservedAt.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(text.out, /^evt_payload_refund .* payload$/m);
    assert.match(text.out, /^REFETCH FROM: the replay re-reads these charges from the gateway/m);
    assert.deepEqual(gateway.requests, []);
  });
});
