import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BENCH_SECRET, type Started, startPeer } from '../../bench/support/services.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';

// The bench compares the inbox with this peer; these check that the peer really is the design it
// stands for (stored once, with its job, in one transaction, before the 200), so a ratio against
// it is a ratio against a correct implementation.

const database = useTestDatabase();
let peer: Started;
const created = Math.floor(Date.now() / 1000);

setup(async () => {
  peer = await startPeer(database.url);
  database.onTeardown(() => peer.process.stop());
});

async function storedFor(eventId: string) {
  return database.sql<{ resource_id: string; singleton_key: string | null; raw_body_matches: boolean }[]>`
    select i.resource_id, j.singleton_key, convert_from(i.raw_body, 'UTF8')::jsonb = i.payload as raw_body_matches
    from webhook_inbox i left join pgboss.job j on j.name = 'webhooks' and (j.data->>'inboxId')::bigint = i.id
    where i.event_id = ${eventId}`;
}

test('a signed delivery is stored with one job keyed by its charge before the peer answers 200', async () => {
  const body = chargeEvent({ id: 'evt_peer_1', type: 'charge.succeeded', chargeId: 'ch_peer_1', created });
  const response = await postStripe(peer.baseUrl, body, BENCH_SECRET);
  assert.equal(response.status, 200);
  assert.deepEqual([...(await storedFor('evt_peer_1'))], [{ resource_id: 'ch_peer_1', singleton_key: 'ch_peer_1', raw_body_matches: true }]);
});

test('a duplicate delivery gets 200 and stores neither a second row nor a second job', async () => {
  const body = chargeEvent({ id: 'evt_peer_2', type: 'charge.succeeded', chargeId: 'ch_peer_2', created });
  assert.equal((await postStripe(peer.baseUrl, body, BENCH_SECRET)).status, 200);
  assert.equal((await postStripe(peer.baseUrl, body, BENCH_SECRET)).status, 200);
  assert.equal((await storedFor('evt_peer_2')).length, 1, 'one row, joined to exactly one job');
});

test("a dispute's job is keyed by the disputed charge, not by the dispute", async () => {
  const body = chargeEvent({ id: 'evt_peer_3', type: 'charge.dispute.created', chargeId: 'ch_peer_3', created });
  assert.equal((await postStripe(peer.baseUrl, body, BENCH_SECRET)).status, 200);
  const [row] = await storedFor('evt_peer_3');
  assert.equal(row?.singleton_key, 'ch_peer_3');
});

test('a delivery signed with another secret gets 401 and stores nothing', async () => {
  const body = chargeEvent({ id: 'evt_peer_4', type: 'charge.succeeded', chargeId: 'ch_peer_4', created });
  assert.equal((await postStripe(peer.baseUrl, body, 'whsec_someone_else')).status, 401);
  assert.equal((await storedFor('evt_peer_4')).length, 0);
});

test('when the COMMIT fails the answer is 500 and neither the row nor its job remains', async () => {
  // A deferred constraint trigger fails the transaction at COMMIT, after both inserts succeeded:
  // a job sent outside the row's transaction, or a 200 sent before COMMIT, would show here.
  await database.sql.unsafe(`create function peer_test_refuse_commit() returns trigger language plpgsql as $$ begin raise exception 'commit refused by the test'; end $$`);
  await database.sql.unsafe(`create constraint trigger peer_test_refuse_commit after insert on webhook_inbox deferrable initially deferred for each row execute function peer_test_refuse_commit()`);
  try {
    const body = chargeEvent({ id: 'evt_peer_5', type: 'charge.succeeded', chargeId: 'ch_peer_5', created });
    assert.equal((await postStripe(peer.baseUrl, body, BENCH_SECRET)).status, 500);
    assert.equal((await storedFor('evt_peer_5')).length, 0, 'no row');
    const [jobs] = await database.sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = 'webhooks' and singleton_key = 'ch_peer_5'`;
    assert.equal(jobs!.n, 0, 'no job');
  } finally {
    await database.sql.unsafe(`drop trigger peer_test_refuse_commit on webhook_inbox`);
  }
});
