import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BENCH_SECRET, type Started } from '../../bench/support/services.ts';
import type { TestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';

export interface StoredEvent {
  resource_id: string;
  singleton_key: string | null;
  /** The stored payload is the body as sent, as jsonb (and the raw body its exact bytes, where kept). */
  payload_matches: boolean;
}

/**
 * The bench compares the inbox with its peers; these check that a peer really is the design it
 * stands for (stored once, with its job, in one transaction, before the 200), so a ratio against
 * it is a ratio against a correct implementation. Both peers' files run them on their own database.
 */
export function peerContract(
  database: TestDatabase,
  peer: () => Started,
  storedEvents: (eventId: string, sentBody: string) => Promise<StoredEvent[]>,
  prefix: string,
): void {
  const created = Math.floor(Date.now() / 1000);
  const sent = new Map<string, string>();
  const event = (n: number, type = 'charge.succeeded') => {
    const body = chargeEvent({ id: `evt_${prefix}_${n}`, type, chargeId: `ch_${prefix}_${n}`, created });
    sent.set(`evt_${prefix}_${n}`, body);
    return body;
  };
  const storedFor = (eventId: string) => storedEvents(eventId, sent.get(eventId)!);

  test('a signed delivery is stored with one job keyed by its charge before the peer answers 200', async () => {
    const response = await postStripe(peer().baseUrl, event(1), BENCH_SECRET);
    assert.equal(response.status, 200);
    assert.deepEqual([...(await storedFor(`evt_${prefix}_1`))], [{ resource_id: `ch_${prefix}_1`, singleton_key: `ch_${prefix}_1`, payload_matches: true }]);
  });

  test('a duplicate delivery gets 200 and stores neither a second row nor a second job', async () => {
    assert.equal((await postStripe(peer().baseUrl, event(2), BENCH_SECRET)).status, 200);
    assert.equal((await postStripe(peer().baseUrl, event(2), BENCH_SECRET)).status, 200);
    assert.equal((await storedFor(`evt_${prefix}_2`)).length, 1, 'one row, joined to exactly one job');
  });

  test("a dispute's job is keyed by the disputed charge, not by the dispute", async () => {
    assert.equal((await postStripe(peer().baseUrl, event(3, 'charge.dispute.created'), BENCH_SECRET)).status, 200);
    const [row] = await storedFor(`evt_${prefix}_3`);
    assert.equal(row?.singleton_key, `ch_${prefix}_3`);
  });

  test('a delivery signed with another secret gets 401 and stores nothing', async () => {
    assert.equal((await postStripe(peer().baseUrl, event(4), 'whsec_someone_else')).status, 401);
    assert.equal((await storedFor(`evt_${prefix}_4`)).length, 0);
  });

  test('when the COMMIT fails the answer is 500 and neither the row nor its job remains', async () => {
    // A deferred constraint trigger fails the transaction at COMMIT, after both inserts succeeded:
    // a job sent outside the row's transaction, or a 200 sent before COMMIT, would show here.
    await database.sql.unsafe(
      `create function peer_test_refuse_commit() returns trigger language plpgsql as $$ begin raise exception 'commit refused by the test'; end $$`,
    );
    await database.sql.unsafe(
      `create constraint trigger peer_test_refuse_commit after insert on webhook_inbox deferrable initially deferred for each row execute function peer_test_refuse_commit()`,
    );
    try {
      assert.equal((await postStripe(peer().baseUrl, event(5), BENCH_SECRET)).status, 500);
      assert.equal((await storedFor(`evt_${prefix}_5`)).length, 0, 'no row');
      const [jobs] = await database.sql<
        { n: number }[]
      >`select count(*)::int as n from pgboss.job where name = 'webhooks' and singleton_key = ${`ch_${prefix}_5`}`;
      assert.equal(jobs!.n, 0, 'no job');
    } finally {
      await database.sql.unsafe(`drop trigger peer_test_refuse_commit on webhook_inbox`);
    }
  });
}
