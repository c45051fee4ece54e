import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DatabaseHandle, postgresExecutor } from '../../src/db/client.ts';
import { toEventRow } from '../../src/inbox/event-row.ts';
import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { insertEventsIfAbsent } from '../../src/inbox/sql/insert-events-if-absent.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';

const database = useTestDatabase();
let handle: DatabaseHandle;

setup(async () => {
  handle = database.connect('insert-events-test');
});

/** Every byte value, NUL and invalid UTF-8 included: raw_body must come back exactly. */
const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function incoming(eventId: string, rawBody: Buffer = Buffer.from(`{"id":"${eventId}"}`)): IncomingEvent {
  return {
    provider: 'stripe',
    event: {
      eventId,
      eventType: 'charge.succeeded',
      resourceId: eventId.endsWith('0') ? null : `ch_${eventId}`,
      occurredAt: new Date('2026-01-02T03:04:05.678Z'),
      payload: { id: eventId, amount: 2000, nested: { text: 'ação "quoted" \\ ✓', big: '12345678901234567890' } },
    },
    rawBody,
    fingerprint: `fingerprint of ${eventId}`,
    proof: { scheme: 'none', verifiedAt: '2026-01-02T03:04:06.000Z' },
  };
}

describe('insertEventsIfAbsent', () => {
  test('stores every batch size exactly (raw bytes, payload, columns) and returns one row per new event', async () => {
    for (const size of [1, 2, 3, 5, 8, 13, 64, 100]) {
      const events = Array.from({ length: size }, (_, i) => incoming(`evt_size_${size}_${i}`, i === 0 ? everyByte : undefined));
      const inserted = await handle.sql.begin((tx) => insertEventsIfAbsent(postgresExecutor(tx), events.map(toEventRow)));
      assert.equal(inserted.length, size, `batch of ${size}: every event is new`);
      const rows = await database.sql<{ id: string; event_id: string; event_type: string; resource_id: string | null; payload: unknown; raw_body: Buffer; occurred_at: Date; received_ms: number }[]>`
        select id, event_id, event_type, resource_id, payload, raw_body, occurred_at, floor(extract(epoch from received_at) * 1000)::float8 as received_ms from webhook_inbox where event_id like ${`evt_size_${size}_%`}`;
      assert.equal(rows.length, size);
      const byEventId = new Map(rows.map((r) => [r.event_id, r]));
      for (const [i, event] of events.entries()) {
        const row = byEventId.get(event.event.eventId)!;
        const returned = inserted.find((r) => r.eventId === event.event.eventId);
        assert.deepEqual(returned, { id: Number(row.id), provider: 'stripe', eventId: event.event.eventId, resourceId: event.event.resourceId, receivedAt: new Date(row.received_ms) });
        assert.ok(Buffer.from(row.raw_body).equals(event.rawBody), `raw body of #${i} byte for byte`);
        assert.deepEqual(row.payload, event.event.payload);
        assert.equal(row.resource_id, event.event.resourceId);
        assert.equal(row.occurred_at.toISOString(), '2026-01-02T03:04:05.678Z');
      }
    }
  });

  test('events already stored are absent from the answer and keep their first row', async () => {
    const first = await handle.sql.begin((tx) => insertEventsIfAbsent(postgresExecutor(tx), [incoming('evt_again_1'), incoming('evt_again_2')].map(toEventRow)));
    const second = await handle.sql.begin((tx) =>
      insertEventsIfAbsent(postgresExecutor(tx), [incoming('evt_again_1', Buffer.from('changed')), incoming('evt_again_3'), incoming('evt_again_2')].map(toEventRow)),
    );
    assert.deepEqual(second.map((r) => r.eventId), ['evt_again_3']);
    const [row] = await database.sql<{ id: string; raw_body: Buffer }[]>`select id, raw_body from webhook_inbox where event_id = 'evt_again_1'`;
    assert.equal(Number(row!.id), first.find((r) => r.eventId === 'evt_again_1')!.id);
    assert.equal(Buffer.from(row!.raw_body).toString(), '{"id":"evt_again_1"}');
  });
});
