/**
 * An event naming an account the configuration does not know (a Connect provider listing its
 * knownAccounts): stored and folded like any other, never refused, and reported once per account:
 * one warning in the log, inbox_unknown_accounts_total in /metrics counting accounts, not events.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { useService } from '../support/service.ts';
import { postStripe } from '../support/stripe.ts';
import { connectEvent } from './support.ts';

const { lines, destination } = logLineCapture();
const database = useTestDatabase();
const service = useService({
  database,
  env: { INBOX_CONFIG: '/inbox.json', WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ADMIN_TOKEN: 'admin-token-for-accounts-test-0123' },
  files: { '/inbox.json': JSON.stringify({ providers: { stripe: { driver: 'stripe', connect: true, knownAccounts: ['acct_1Known'] } } }) },
  logger: createLogger('info', destination),
});

async function unknownAccountsMetric(): Promise<string[]> {
  const response = await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: 'Bearer admin-token-for-accounts-test-0123' } });
  const text = await response.text();
  assert.equal(response.status, 200, text.slice(0, 200));
  return text.split('\n').filter((line) => line.startsWith('inbox_unknown_accounts_total{'));
}

describe('an event naming an account the configuration does not know', () => {
  test('is stored and folded, and reported once per account in the log and /metrics', async () => {
    assert.deepEqual(await unknownAccountsMetric(), ['inbox_unknown_accounts_total{provider="stripe"} 0']);
    const created = 1_760_000_000;
    const posts = [
      connectEvent('acct_1Known', { id: 'evt_known_1', type: 'charge.succeeded', chargeId: 'ch_known_1', created }),
      connectEvent('acct_1Stranger', { id: 'evt_stranger_1', type: 'charge.succeeded', chargeId: 'ch_stranger_1', created }),
      connectEvent('acct_1Stranger', { id: 'evt_stranger_2', type: 'charge.refunded', chargeId: 'ch_stranger_1', created: created + 10, amountRefunded: 2000 }),
      connectEvent('acct_1Stranger', { id: 'evt_stranger_3', type: 'charge.succeeded', chargeId: 'ch_stranger_2', created }),
    ];
    for (const body of posts) assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200, 'never refused');
    // A resend of one of them: a duplicate, still not a second report.
    assert.equal((await postStripe(service.baseUrl, posts[1]!, SECRET)).status, 200);
    await waitUntilSettled(database.sql, ['evt_known_1', 'evt_stranger_1', 'evt_stranger_2', 'evt_stranger_3']);

    const payments = await database.sql`select gateway_charge_id, account, status from payments order by gateway_charge_id`;
    assert.deepEqual(
      payments.map((p) => [p.gateway_charge_id, p.account, p.status]),
      [
        ['ch_known_1', 'acct_1Known', 'paid'],
        ['ch_stranger_1', 'acct_1Stranger', 'refunded'],
        ['ch_stranger_2', 'acct_1Stranger', 'paid'],
      ],
    );
    assert.deepEqual(await unknownAccountsMetric(), ['inbox_unknown_accounts_total{provider="stripe"} 1']);
    const reports = lines
      .map((line) => JSON.parse(line) as { msg: string; account?: string })
      .filter((entry) => entry.msg.includes('account the configuration does not know'));
    assert.deepEqual(
      reports.map((r) => r.account),
      ['acct_1Stranger'],
    );
  });
});
