/**
 * A Pagar.me charge split between recipients, end to end over real HTTP: the v5 webhook, signed
 * RS256 with a key the driver fetches from a real JWKS server, carries the split on its last
 * transaction in the shape Pagar.me publishes (docs.pagar.me "Split" answer; its split-rules page
 * writes one flat amount as the string "10000"). The split is on the payment lookup and on the
 * outbound event; `inboxctl purge` then removes the payloads, a partial cancellation arrives (its
 * last transaction with a refund split of its own), and the payment keeps the charge's split: the
 * fold read it from the kept facts, not from payloads.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { API_TOKEN, feedOnceItHolds } from '../api/feed-client.ts';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { type JwksServer, type TestSigningKey, generateSigningKey, startJwksServer } from '../gateways/jwks-server.ts';
import { waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { setup } from '../support/setup.ts';

const database = useTestDatabase();
let jwks: JwksServer;
let key: TestSigningKey;
let archiveDir: string;
let configFile: string;

setup(async () => {
  key = generateSigningKey('split-key');
  jwks = await startJwksServer([key]);
  archiveDir = await mkdtemp(path.join(tmpdir(), 'pagarme-split-'));
  configFile = JSON.stringify({ providers: { pagarme: { driver: 'pagarme', jwksUrl: jwks.url, jwksCooldownSeconds: 0 } } });
});

const service = useService(() => ({
  database,
  env: { INBOX_CONFIG: '/inbox.json', INBOX_API_TOKEN: API_TOKEN, INBOX_ARCHIVE_DIR: archiveDir, INBOX_DASHBOARD: 'on' },
  files: { '/inbox.json': configFile },
}));

after(async () => {
  await jwks?.close();
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const CHARGE = 'ch_split_GBnP26LF4FkyZvpm';

/** The two rules of Pagar.me's published split answer: a flat R$ 100,00 (as a string) and 50 %. */
const publishedSplit = [
  {
    id: 'sr_z57bX1Yujni9EMXa',
    amount: '10000',
    type: 'flat',
    gateway_id: 'sr_ck5cjwv36006ykw6e1o54ahwz',
    recipient: { id: 'rp_5yGwpMGckBHVYmb6', name: 'Tony Shark', type: 'individual', status: 'active' },
    options: { liable: true, charge_processing_fee: true, charge_remainder_fee: true },
  },
  {
    id: 'sr_VjnrOnXT01t2a5L3',
    type: 'percentage',
    gateway_id: 'sr_ck5cjwv37006zkw6egthikmwj',
    amount: 50,
    recipient: { id: 'rp_yLnAyVpHbQIqZxwO', name: 't', type: 'company', status: 'active' },
    options: { liable: false, charge_processing_fee: false, charge_remainder_fee: false },
  },
];

const expectedSplit = [
  {
    recipient_id: 'rp_5yGwpMGckBHVYmb6',
    rule_id: 'sr_z57bX1Yujni9EMXa',
    amount: 10000,
    percentage: null,
    liable: true,
    charge_processing_fee: true,
    charge_remainder_fee: true,
  },
  {
    recipient_id: 'rp_yLnAyVpHbQIqZxwO',
    rule_id: 'sr_VjnrOnXT01t2a5L3',
    amount: null,
    percentage: 50,
    liable: false,
    charge_processing_fee: false,
    charge_remainder_fee: false,
  },
];

function hook(id: string, type: string, createdAt: string, data: Record<string, unknown>): string {
  return JSON.stringify({
    id,
    account: { id: 'acc_Z5P8OoyFgOI9r84q', name: 'Marketplace' },
    type,
    created_at: createdAt,
    data: { id: CHARGE, code: 'WKDTXRSV7Q-01', amount: 20000, currency: 'BRL', payment_method: 'credit_card', ...data },
  });
}

async function post(body: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/webhooks/pagarme`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-asymmetric-signature': key.header(body) },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

interface PaymentView {
  payment: { status: string; amount_refunded: number; split: unknown };
  events: { sequence: number; payment: { split?: unknown } }[];
}

async function lookup(): Promise<PaymentView> {
  const response = await fetch(`${service.baseUrl}/api/v1/payments/pagarme/${CHARGE}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
  assert.equal(response.status, 200);
  return (await response.json()) as PaymentView;
}

describe('a Pagar.me split charge', () => {
  test('shows its split on the payment lookup and the outbound event, and keeps it once the payloads are purged', async () => {
    const paid = hook('hook_split_paid', 'charge.paid', '2025-01-01T04:15:39Z', {
      status: 'paid',
      paid_amount: 20000,
      paid_at: '2025-01-01T04:15:39Z',
      last_transaction: {
        id: 'tran_71eaxPbUAUZGronE',
        transaction_type: 'credit_card',
        amount: 20000,
        status: 'captured',
        success: true,
        split: publishedSplit,
      },
    });
    assert.equal(await post(paid), 200);
    await waitUntilSettled(database.sql, ['hook_split_paid'], 20_000, 'pagarme');

    const first = await lookup();
    assert.equal(first.payment.status, 'paid');
    assert.deepEqual(first.payment.split, expectedSplit);
    // The operator's payment page says it too, one recipient per line with its share and flags.
    const page = await (await fetch(`${service.baseUrl}/dashboard/payments/pagarme/${CHARGE}`)).text();
    const splitField = /<dd data-field="split">([\s\S]*?)<\/dd>/.exec(page)?.[1] ?? '';
    assert.match(splitField, /rp_5yGwpMGckBHVYmb6<\/code>: R\$100\.00, liable for chargebacks, pays the processing fee, receives the remainder/);
    assert.match(splitField, /rp_yLnAyVpHbQIqZxwO<\/code>: /);
    const feed = await feedOnceItHolds(service.baseUrl, 1);
    assert.deepEqual(
      feed.map((e) => [e.sequence, e.payment.split]),
      [[1, expectedSplit]],
      'the outbound event carries the split',
    );

    const purge = await runInboxctl(['purge', '--older-than', '0s', '--provider', 'pagarme', '--force'], {
      DATABASE_URL: database.url,
      INBOX_ARCHIVE_DIR: archiveDir,
    });
    assert.equal(purge.code, 0, purge.stderr);
    const [inbox] = await database.sql`select count(*)::int as n from webhook_inbox`;
    assert.equal(inbox!.n, 0, 'the payload is gone');

    // A partial cancellation of R$ 50,00, its transaction carrying the refund's own division.
    const canceled = hook('hook_split_partial', 'charge.partial_canceled', '2025-01-02T10:00:00Z', {
      status: 'paid',
      paid_amount: 20000,
      canceled_amount: 5000,
      last_transaction: {
        id: 'tran_71eaxPbUAUZGronE',
        transaction_type: 'credit_card',
        status: 'partial_refunded',
        split: [{ id: 'sr_refund_1', type: 'flat', amount: 5000, recipient: { id: 'rp_yLnAyVpHbQIqZxwO' }, options: {} }],
      },
    });
    assert.equal(await post(canceled), 200);
    await waitUntilSettled(database.sql, ['hook_split_partial'], 20_000, 'pagarme');

    const second = await lookup();
    assert.deepEqual([second.payment.status, second.payment.amount_refunded], ['partially_refunded', 5000]);
    assert.deepEqual(second.payment.split, expectedSplit, "the charge's split, folded from the kept facts, not the refund's");
    assert.deepEqual(
      second.events.map((e) => [e.sequence, e.payment.split]),
      [
        [1, expectedSplit],
        [2, expectedSplit],
      ],
    );
  });

  test('a charge with no split has none on the lookup (null) and no split field in its events', async () => {
    const plain = JSON.parse(hook('hook_plain_paid', 'charge.paid', '2025-01-03T00:00:00Z', { status: 'paid', paid_amount: 20000 })) as {
      data: Record<string, unknown>;
    };
    plain.data.id = 'ch_plain_1';
    const body = JSON.stringify(plain);
    assert.equal(await post(body), 200);
    await waitUntilSettled(database.sql, ['hook_plain_paid'], 20_000, 'pagarme');
    const response = await fetch(`${service.baseUrl}/api/v1/payments/pagarme/ch_plain_1`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
    const view = (await response.json()) as PaymentView;
    assert.equal(view.payment.split, null);
    assert.deepEqual(
      view.events.map((e) => 'split' in e.payment),
      [false],
    );
  });
});
