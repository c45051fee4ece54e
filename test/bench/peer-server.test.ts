import { type Started, startPeer } from '../../bench/support/services.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { type StoredEvent, peerContract } from './peer-contract.ts';

// The peer on the inbox's own schema (bench/peer/peer-server.ts): the raw body is kept too.
const database = useTestDatabase();
let peer: Started;

setup(async () => {
  peer = await startPeer(database.url);
  database.onTeardown(() => peer.process.stop());
});

peerContract(
  database,
  () => peer,
  (eventId, sentBody) => database.sql<StoredEvent[]>`
    select i.resource_id, j.singleton_key, i.payload = ${sentBody}::text::jsonb and convert_from(i.raw_body, 'UTF8') = ${sentBody}::text as payload_matches
    from webhook_inbox i left join pgboss.job j on j.name = 'webhooks' and (j.data->>'inboxId')::bigint = i.id
    where i.event_id = ${eventId}`,
  'peer',
);
