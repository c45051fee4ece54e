import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { useTestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { useService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { SECRET, inboxRows } from './harness.ts';

const database = useTestDatabase();
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

const service = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET },
  handlers: createHandlerRegistry([slow]),
  worker: { shutdownTimeoutMs: 20_000 },
});

describe('graceful stop', () => {
  test('stop() waits for the job in flight, which finishes and commits', async () => {
    const body = chargeEvent({ id: 'evt_in_flight', type: 'customer.updated', chargeId: 'cus_in_flight', created: Math.floor(Date.now() / 1000) });
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    await waitFor(() => entered, { message: 'the handler to start' });
    let stopped = false;
    const stopping = service.stop().then(() => {
      stopped = true;
    });
    // The handler is let go only once the stop is under way: pg-boss has told the worker that holds
    // the job to stop, and stop() has not resolved, because that job is still running.
    const webhookWorkerStopping = () => service.boss.getWipData().some((w) => w.name === WEBHOOKS_QUEUE && w.state === 'stopping');
    await waitFor(webhookWorkerStopping, { message: 'the webhooks worker to be stopping' });
    assert.equal(stopped, false, 'stop() waits for the job in flight');
    release();
    await stopping;
    const [row] = await inboxRows(database.sql, ['evt_in_flight']);
    assert.equal(row!.status, 'processed');
  });
});
