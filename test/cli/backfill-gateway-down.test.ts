import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { blamesTheDatabase } from '../../src/operations/database-blame.ts';
import { OperationIncompleteError } from '../../src/operations/errors.ts';
import { GatewayUnavailableError } from '../../src/refetch/errors.ts';
import { useTestDatabase } from '../support/database.ts';
import { freePort } from '../support/free-port.ts';
import { setup } from '../support/setup.ts';
import { runInboxctl } from './run-inboxctl.ts';

// Found by a probe: on a machine that could not resolve api.stripe.com, the gateway's ENOTFOUND,
// two causes down, matched the database's network error codes, so `backfill` said "database
// unreachable" (exit 3) while the database was fine.

const database = useTestDatabase();
let env: Record<string, string>;
let gatewayUrl: string;
let scratch: string | undefined;

setup(async () => {
  // Nothing listens here: every request to the gateway's API fails before an answer (ECONNREFUSED).
  gatewayUrl = `http://127.0.0.1:${await freePort()}`;
  scratch = await mkdtemp(path.join(tmpdir(), 'inboxctl-gateway-down-'));
  const file = path.join(scratch, 'inbox.json');
  await writeFile(file, JSON.stringify({ providers: { stripe: { driver: 'stripe', ordering: { default: 'occurred_at' }, api: { baseUrl: gatewayUrl } } } }));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_gateway_down', GATEWAY_API_KEY_STRIPE: 'sk_test_123', INBOX_CONFIG: file };
});

after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('inboxctl backfill with the gateway unreachable', () => {
  for (const dryRun of [true, false]) {
    test(`${dryRun ? '--dry-run' : 'a real run'}: exit 4, one line naming the gateway's URL, not the database`, async () => {
      const run = await runInboxctl(['backfill', 'stripe', '--since', '72h', ...(dryRun ? ['--dry-run'] : [])], env);
      assert.equal(run.code, 4, run.stderr);
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
      assert.ok(run.stderr.includes(`GET ${gatewayUrl}/v1/events`), run.stderr);
      assert.match(run.stderr, /GatewayUnavailableError/);
      assert.doesNotMatch(run.stderr, /database/i);
      assert.doesNotMatch(run.stderr, /\.\./, 'one full stop between the cause and the advice');
      assert.equal((await database.sql`select count(*)::int as n from webhook_inbox`)[0]!.n, 0);
    });
  }
});

describe('blamesTheDatabase', () => {
  test("a gateway's network error, however deep, is not the database's", () => {
    for (const code of ['ENOTFOUND', 'ECONNREFUSED', 'ETIMEDOUT', 'EAI_AGAIN']) {
      const network = Object.assign(new Error(`getaddrinfo ${code} api.stripe.com`), { code });
      const gateway = new GatewayUnavailableError('stripe', 'GET https://api.stripe.com/v1/events failed before an answer', {
        cause: new TypeError('fetch failed', { cause: network }),
      });
      assert.equal(blamesTheDatabase(gateway), false, code);
      assert.equal(blamesTheDatabase(new OperationIncompleteError('backfill', '0 page(s) read', gateway)), false, code);
    }
  });

  test("the database's own network error still is, bare or wrapped", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    assert.equal(blamesTheDatabase(refused), true);
    assert.equal(blamesTheDatabase(new OperationIncompleteError('purge', '2 batch(es) archived', refused)), true);
  });
});
