/**
 * A cursor names positions in one PostgreSQL cluster's transaction ids. The inbox restored into
 * another cluster (a logical restore, a move) numbers its transactions afresh, so a consumer's
 * saved cursor means nothing there: the feed must say so instead of answering empty pages forever.
 * Two real clusters: the test run's, and one of this file's own (initdb, pg_ctl).
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { type TestDatabase, useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { prepareTemplate } from '../support/template.ts';
import { waitFor } from '../support/wait.ts';
import { API_TOKEN } from './feed-client.ts';

const database = useTestDatabase();
const env = { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_API_TOKEN: API_TOKEN };
let scratch: string;
let otherCluster: EmbeddedDatabase;
let here: TestService;
let restored: TestService;
const closeOnOtherCluster: Array<() => Promise<unknown> | void> = [];

interface Page {
  events: { id: string }[];
  next_cursor: string;
}

const feed = (service: TestService, after: string) =>
  fetch(`${service.baseUrl}/api/v1/payment-events?after=${encodeURIComponent(after)}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });

setup(async () => {
  here = await startTestService({ database, env });
  const body = chargeEvent({ id: 'evt_cluster_1', type: 'charge.succeeded', chargeId: 'ch_cluster_1', created: 1_760_000_000, amount: 1500 });
  assert.equal((await postStripe(here.baseUrl, body, SECRET)).status, 200);
  await waitUntilSettled(database.sql, ['evt_cluster_1']);

  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-feed-cluster-'));
  await chmod(scratch, 0o755);
  otherCluster = await startEmbeddedPostgres({ baseDir: path.join(scratch, '.inbox'), preferredPort: 0, relocationDir: scratch });
  await applyMigrations(otherCluster.url);
  await prepareTemplate(otherCluster.url);
  const elsewhere = { url: otherCluster.url, onTeardown: (close: () => Promise<unknown> | void) => void closeOnOtherCluster.push(close) } as TestDatabase;
  restored = await startTestService({ database: elsewhere, env });
});

after(async () => {
  for (const close of closeOnOtherCluster.reverse()) await close();
  await otherCluster?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('a cursor from another PostgreSQL cluster', () => {
  test('is refused with 409 cursor_from_other_cluster, saying to read from the start and deduplicate on the event id', async () => {
    let page: Page | undefined;
    await waitFor(
      async () => {
        page = (await (await feed(here, '')).json()) as Page;
        return page.events.length === 1;
      },
      { message: 'the event in the feed of the cluster it was written in' },
    );
    const saved = page!.next_cursor;

    const response = await feed(restored, saved);
    assert.equal(response.status, 409, 'a consumer with a cursor of the old cluster is told, not handed empty pages forever');
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'cursor_from_other_cluster');
    assert.match(error.message, /another PostgreSQL cluster/);
    assert.match(error.message, /omit `after`/);
    assert.match(error.message, /skip the events whose `id` you have already applied/);
  });

  test('the same cursor keeps working where it was issued, and a fresh read of the other cluster works', async () => {
    const page = (await (await feed(here, '')).json()) as Page;
    const again = await feed(here, page.next_cursor);
    assert.equal(again.status, 200);
    assert.deepEqual(((await again.json()) as Page).events, []);
    assert.equal((await feed(restored, '')).status, 200);
  });
});
