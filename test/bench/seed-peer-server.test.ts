import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Started, startSeedPeer } from '../../bench/support/services.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { type StoredEvent, peerContract } from './peer-contract.ts';

// The seed-style peer (bench/peer/seed-peer-server.ts) on a database holding only its one table
// and pg-boss's schema: the inbox's tables of the cloned template are dropped first, so the peer
// cannot be writing to them.
const database = useTestDatabase();
let peer: Started;

setup(async () => {
  await database.sql.unsafe('drop schema public cascade; create schema public');
  peer = await startSeedPeer(database.url);
  database.onTeardown(() => peer.process.stop());
});

peerContract(
  database,
  () => peer,
  (eventId, sentBody) => database.sql<StoredEvent[]>`
    select i.resource_id, j.singleton_key, i.payload = ${sentBody}::text::jsonb as payload_matches
    from webhook_inbox i left join pgboss.job j on j.name = 'webhooks' and (j.data->>'inboxId')::bigint = i.id
    where i.event_id = ${eventId}`,
  'seed',
);

test('the seed table is the one table of its schema, deduplicated by a unique index on (provider, event_id)', async () => {
  const tables = await database.sql<{ table_name: string }[]>`select table_name from information_schema.tables where table_schema = 'public'`;
  assert.deepEqual(
    tables.map((t) => t.table_name),
    ['webhook_inbox'],
  );
  const unique = await database.sql<
    { indexdef: string }[]
  >`select indexdef from pg_indexes where tablename = 'webhook_inbox' and indexdef like 'CREATE UNIQUE INDEX %'`;
  assert.deepEqual(unique.map((i) => i.indexdef.replace(/.* USING btree /, '')).sort(), ['(id)', '(provider, event_id)'].sort());
});
