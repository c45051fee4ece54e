/**
 * Asaas subaccounts on one provider, over real HTTP: two subaccounts, each with its own webhook
 * token and API key (INBOX_CONFIG `accounts`), and the root account's own token. Each delivery is
 * attributed to the account whose token it carries, whatever else it says; a wrong token is 401.
 * Every kind is re-read from a fake Asaas API (a real HTTP server) that answers a charge only to
 * the key of the account that owns it (401 otherwise, as Asaas answers an invalid key), so a read
 * with the wrong key fails the event instead of passing unnoticed.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { API_TOKEN, drainFeed } from '../api/feed-client.ts';
import { waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { useService } from '../support/service.ts';
import { setup } from '../support/setup.ts';

const database = useTestDatabase();

const ACCOUNTS = {
  'loja-a': { token: 'asaas-subconta-a-token-0123456789abcdef', apiKey: '$aact_subconta_a_key' },
  'loja-b': { token: 'asaas-subconta-b-token-fedcba9876543210', apiKey: '$aact_subconta_b_key' },
} as const;
const ROOT = { token: 'asaas-root-account-token-00112233445566', apiKey: '$aact_root_key' };
type Owner = keyof typeof ACCOUNTS | 'root';

const keyOf = (owner: Owner) => (owner === 'root' ? ROOT.apiKey : ACCOUNTS[owner].apiKey);
const tokenOf = (owner: Owner) => (owner === 'root' ? ROOT.token : ACCOUNTS[owner].token);

/** What each account holds at Asaas: the charge's owner and its state as the API answers it. */
const charges = new Map<string, { owner: Owner; status: string }>();
let gateway: FakeGateway;

setup(async () => {
  gateway = await startFakeGateway();
  gateway.rules.push((request) => {
    const match = /^\/v3\/payments\/(\w+)$/.exec(request.pathname);
    if (!match) return undefined;
    const charge = charges.get(match[1]!);
    // Asaas: an unknown or another account's charge is not there for this key.
    if (!charge || request.headers.access_token !== keyOf(charge.owner)) return { status: 401, json: { errors: [{ code: 'invalid_access_token' }] } };
    const paid = charge.status !== 'PENDING';
    return {
      status: 200,
      json: {
        object: 'payment',
        id: match[1],
        status: charge.status,
        value: 150.25,
        deleted: false,
        refunds: null,
        confirmedDate: paid ? '2026-06-12' : null,
        paymentDate: paid ? '2026-06-12' : null,
      },
    };
  });
});

after(async () => {
  await gateway?.close();
});

const service = useService(() => ({
  database,
  env: { INBOX_CONFIG: '/inbox.json', INBOX_API_TOKEN: API_TOKEN, WEBHOOK_SECRET_ASAAS: ROOT.token, GATEWAY_API_KEY_ASAAS: ROOT.apiKey },
  files: {
    '/inbox.json': JSON.stringify({
      providers: {
        asaas: {
          driver: 'asaas',
          api: { baseUrl: gateway.baseUrl },
          ordering: { default: 'refetch' },
          ratePerSecond: 1000,
          accounts: Object.entries(ACCOUNTS).map(([id, account]) => ({ id, ...account })),
        },
      },
    }),
  },
  worker: { retryDelaySeconds: 1, retryDelayMaxSeconds: 1 },
}));

function webhook(eventId: string, chargeId: string, event = 'PAYMENT_RECEIVED'): string {
  return JSON.stringify({
    id: eventId,
    event,
    dateCreated: '2026-06-12 16:45:03',
    payment: {
      object: 'payment',
      id: chargeId,
      value: 150.25,
      netValue: 148.01,
      billingType: 'PIX',
      status: 'RECEIVED',
      deleted: false,
      confirmedDate: '2026-06-12',
      paymentDate: '2026-06-12',
    },
  });
}

async function post(body: string, token: string | undefined): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers['asaas-access-token'] = token;
  const response = await fetch(`${service.baseUrl}/webhooks/asaas`, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}

describe('Asaas subaccounts', () => {
  test("each delivery is its token's account's, never another's; its charge is re-read with that account's key", async () => {
    // Six charges per account, the API's answer differing from the webhook's (REFUNDED) for some, so
    // the payment's status says the read happened.
    const owners: Owner[] = ['loja-a', 'loja-b', 'root'];
    const deliveries: { eventId: string; chargeId: string; owner: Owner }[] = [];
    for (const owner of owners) {
      for (let i = 0; i < 6; i += 1) {
        const chargeId = `pay_${owner.replace('-', '')}_${i}`;
        charges.set(chargeId, { owner, status: i % 2 === 0 ? 'RECEIVED' : 'REFUNDED' });
        deliveries.push({ eventId: `evt_${chargeId}&1`, chargeId, owner });
      }
    }
    // Interleaved and sent at once: attribution must not depend on order or company.
    const shuffled = deliveries
      .map((d, i) => ({ d, k: (i * 7) % deliveries.length }))
      .sort((a, b) => a.k - b.k)
      .map(({ d }) => d);
    const statuses = await Promise.all(shuffled.map(({ eventId, chargeId, owner }) => post(webhook(eventId, chargeId), tokenOf(owner))));
    assert.deepEqual(new Set(statuses), new Set([200]));
    await waitUntilSettled(
      database.sql,
      deliveries.map((d) => d.eventId),
      30_000,
      'asaas',
    );

    const expectedAccount = (owner: Owner) => (owner === 'root' ? null : owner);
    const inbox = await database.sql`select event_id, account, status from webhook_inbox order by event_id`;
    assert.deepEqual(
      inbox.map((r) => [r.event_id, r.account, r.status]),
      [...deliveries].sort((a, b) => (a.eventId < b.eventId ? -1 : 1)).map((d) => [d.eventId, expectedAccount(d.owner), 'processed']),
    );
    const payments = await database.sql`select gateway_charge_id, account, status from payments order by gateway_charge_id`;
    assert.deepEqual(
      payments.map((r) => [r.gateway_charge_id, r.account, r.status]),
      [...charges].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, c]) => [id, expectedAccount(c.owner), c.status === 'REFUNDED' ? 'refunded' : 'paid']),
    );
    const { events } = await drainFeed(service.baseUrl, '', 100);
    for (const event of events) assert.equal(event.payment.account, expectedAccount(charges.get(event.payment.charge_id)!.owner), event.payment.charge_id);

    // Every read used the owner's key, and only it: no charge was ever asked for with another account's.
    const reads = gateway.requests.filter((r) => r.pathname.startsWith('/v3/payments/'));
    assert.ok(reads.length >= deliveries.length);
    for (const read of reads) {
      const chargeId = read.pathname.split('/').at(-1)!;
      assert.equal(read.headers.access_token, keyOf(charges.get(chargeId)!.owner), `${chargeId} read with another account's key`);
    }
  });

  test("a wrong token, another provider's, or none is 401 and stores nothing", async () => {
    const before = await database.sql`select count(*)::int as n from webhook_inbox`;
    for (const token of ['asaas-subconta-c-token-not-configured-000', ACCOUNTS['loja-a'].token.slice(0, -1), `${ACCOUNTS['loja-b'].token} x`, undefined]) {
      assert.equal(await post(webhook('evt_refused&1', 'pay_refused'), token), 401, String(token));
    }
    const afterwards = await database.sql`select count(*)::int as n from webhook_inbox`;
    assert.equal(afterwards[0]!.n, before[0]!.n);
  });
});
