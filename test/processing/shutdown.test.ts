import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { createTestDatabase, type CreatedDatabase as TestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitForLegacy as waitFor } from '../support/wait.ts';
import { type InboxService, SECRET, inboxRows, startInbox } from './harness.ts';

let database: TestDatabase;
let service: InboxService;
let entered = false;
let release: () => void = () => {};
const released = new Promise<void>((resolve) => {
  release = resolve;
});

// A slow handler: its work outside the transaction lasts until the test lets it finish.
const slow: EventHandler = {
  name: 'slow',
  kinds: ['stripe:customer.updated'],
  async prepare() {
    entered = true;
    await released;
  },
  async apply(_tx, events) {
    return events.map(() => ({ outcome: 'processed' }));
  },
};

before(async () => {
  database = await createTestDatabase();
  service = await startInbox(database.url, { handlers: createHandlerRegistry([slow]), worker: { shutdownTimeoutMs: 20_000 } });
});

after(async () => {
  await database?.drop();
});

describe('graceful stop', () => {
  test('stop() waits for the job in flight, which finishes and commits', async () => {
    const body = chargeEvent({ id: 'evt_in_flight', type: 'customer.updated', chargeId: 'cus_in_flight', created: Math.floor(Date.now() / 1000) });
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    await waitFor('the handler to start', () => entered);
    const stopping = service.stop();
    // Let the stop get under way before the handler finishes; whatever the timing, the handler
    // must have committed by the time stop() resolves.
    setTimeout(release, 300);
    await stopping;
    const [row] = await inboxRows(database.sql, ['evt_in_flight']);
    assert.equal(row!.status, 'processed');
  });
});
