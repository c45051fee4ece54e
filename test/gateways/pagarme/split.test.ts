/**
 * The split of a Pagar.me charge, read from its webhooks (v5: the charge's last transaction; v4:
 * the postback's transaction[split_rules]) and from the v5 API, in the shapes Pagar.me published.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mapPagarmeCharge } from '../../../src/gateways/pagarme/api.ts';
import { toPagarmePaymentFact } from '../../../src/gateways/pagarme/webhook-driver.ts';
import { pagarmeLegacyDriver } from '../../../src/gateways/pagarme-legacy/webhook-driver.ts';
import type { StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { createDriver, webhookRequest } from '../request.ts';

const at = new Date('2025-01-01T04:15:39Z');

// docs.pagar.me "Split" (v5): the rules as a charge's last transaction answers them (the first as
// published there; the second, cut from the excerpt, in the same shape).
const publishedSplit = [
  {
    id: 'sr_rqNglzXwF5fMQ2Rd',
    type: 'percentage',
    amount: 50,
    recipient: { id: 'rp_7YZXapnCAWcGrnaV', name: 'Recipient 1', type: 'individual', status: 'active' },
    options: { liable: true, charge_processing_fee: true, charge_remainder_fee: true },
  },
  {
    id: 'sr_yLnAyVpHbQIqZxwO',
    type: 'percentage',
    amount: 50,
    recipient: { id: 'rp_Xa2YpnBR3WcXrn1E', name: 'Recipient 2', type: 'company', status: 'active' },
    options: { liable: false, charge_processing_fee: false, charge_remainder_fee: false },
  },
];

const shares = [
  {
    recipientId: 'rp_7YZXapnCAWcGrnaV',
    ruleId: 'sr_rqNglzXwF5fMQ2Rd',
    amount: null,
    percentage: 50,
    liable: true,
    chargeProcessingFee: true,
    chargeRemainderFee: true,
  },
  {
    recipientId: 'rp_Xa2YpnBR3WcXrn1E',
    ruleId: 'sr_yLnAyVpHbQIqZxwO',
    amount: null,
    percentage: 50,
    liable: false,
    chargeProcessingFee: false,
    chargeRemainderFee: false,
  },
];

function charge(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'ch_split_1',
    amount: 10000,
    paid_amount: 10000,
    status: 'paid',
    currency: 'BRL',
    last_transaction: { status: 'captured', split: publishedSplit },
    ...extra,
  };
}

const v5 = (eventType: string, data: Record<string, unknown>): StoredEvent => ({
  provider: 'pagarme',
  eventId: 'hook_1',
  eventType,
  resourceId: String(data.id),
  occurredAt: at,
  payload: { id: 'hook_1', type: eventType, data },
  payloadLossy: false,
});

describe('pagarme v5: the split of a charge', () => {
  test("a charge.paid carries its last transaction's split rules, as Pagar.me names them", () => {
    assert.deepEqual(toPagarmePaymentFact(v5('charge.paid', charge()))?.split, shares);
  });

  test('a rule as a request writes it (recipient_id, flat amount in centavos) is read too', () => {
    const asSent = [
      {
        amount: 2440,
        type: 'flat',
        recipient_id: 're_clh90m1e10h1r019tk5fh88uk',
        options: { liable: true, charge_processing_fee: true, charge_remainder_fee: true },
      },
    ];
    const fact = toPagarmePaymentFact(v5('charge.paid', charge({ last_transaction: { status: 'captured', split: asSent } })));
    assert.deepEqual(fact?.split, [
      {
        recipientId: 're_clh90m1e10h1r019tk5fh88uk',
        ruleId: null,
        amount: 2440,
        percentage: null,
        liable: true,
        chargeProcessingFee: true,
        chargeRemainderFee: true,
      },
    ]);
  });

  test("a cancellation, whose last transaction may carry the refund's own split, says no split", () => {
    for (const type of ['charge.refunded', 'charge.partial_canceled']) {
      const fact = toPagarmePaymentFact(v5(type, charge({ canceled_amount: 5000, last_transaction: { status: 'partial_refunded', split: publishedSplit } })));
      assert.ok(fact, type);
      assert.equal(fact.split, undefined, type);
    }
  });

  test('no split, an empty one, or one with a rule that cannot be read whole says nothing', () => {
    assert.equal(toPagarmePaymentFact(v5('charge.paid', charge({ last_transaction: { status: 'captured' } })))?.split, undefined);
    assert.equal(toPagarmePaymentFact(v5('charge.paid', charge({ last_transaction: { status: 'captured', split: [] } })))?.split, undefined);
    const broken = [publishedSplit[0], { ...publishedSplit[1], type: 'share' }];
    assert.equal(toPagarmePaymentFact(v5('charge.paid', charge({ last_transaction: { status: 'captured', split: broken } })))?.split, undefined);
    const noRecipient = [{ ...publishedSplit[0], recipient: null }];
    assert.equal(toPagarmePaymentFact(v5('charge.paid', charge({ last_transaction: { status: 'captured', split: noRecipient } })))?.split, undefined);
  });

  test('the API read of a charge gives the split too, but not of a charge something was canceled from', () => {
    assert.deepEqual(mapPagarmeCharge(charge()).split, shares);
    assert.equal(mapPagarmeCharge(charge({ canceled_amount: 2000 })).split, undefined);
    assert.equal(
      mapPagarmeCharge(charge({ status: 'canceled', canceled_amount: 10000, last_transaction: { status: 'refunded', split: publishedSplit } })).split,
      undefined,
    );
  });
});

describe('pagarme v4 postbacks: transaction[split_rules]', () => {
  const driver = createDriver(pagarmeLegacyDriver, { secrets: ['ak_test_split'] });
  // The transaction_status_changed postback of docs.pagar.me "Gerenciando postbacks", as
  // integrators copied it into their tests, split rules included (abridged).
  const body = [
    'id=1396639',
    'event=transaction_status_changed',
    'old_status=processing',
    'desired_status=paid',
    'current_status=paid',
    'object=transaction',
    'transaction%5Bobject%5D=transaction',
    'transaction%5Bstatus%5D=paid',
    'transaction%5Bdate_updated%5D=2017-03-27T18%3A02%3A49.839Z',
    'transaction%5Bamount%5D=1000',
    'transaction%5Bpaid_amount%5D=1000',
    'transaction%5Brefunded_amount%5D=0',
    'transaction%5Bid%5D=1396639',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bobject%5D=split_rule',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bid%5D=sr_cj0sf8o3j00s2n66evsfbcm4u',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Brecipient_id%5D=re_ciu4jif1j007td56dsm17yew9',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bcharge_processing_fee%5D=true',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bcharge_remainder%5D=true',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bliable%5D=true',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bpercentage%5D=100',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bamount%5D=',
    'transaction%5Bsplit_rules%5D%5B0%5D%5Bdate_created%5D=2017-03-27T18%3A02%3A49.471Z',
  ].join('&');
  const stored = (text: string): StoredEvent => ({ provider: 'pagarme-legacy', ...driver.parse(webhookRequest(text), at), payloadLossy: false });

  test('a paid transaction with one rule of 100 %: the rule, its flags (charge_remainder read as charge_remainder_fee)', () => {
    const fact = driver.toPaymentFact(stored(body));
    assert.equal(fact?.status, 'paid');
    assert.deepEqual(fact?.split, [
      {
        recipientId: 're_ciu4jif1j007td56dsm17yew9',
        ruleId: 'sr_cj0sf8o3j00s2n66evsfbcm4u',
        amount: null,
        percentage: 100,
        liable: true,
        chargeProcessingFee: true,
        chargeRemainderFee: true,
      },
    ]);
  });

  test('a transaction without split sends transaction[split_rules]= (empty): no split', () => {
    const plain = body
      .split('&')
      .filter((field) => !field.startsWith('transaction%5Bsplit_rules'))
      .concat('transaction%5Bsplit_rules%5D=')
      .join('&');
    assert.equal(driver.toPaymentFact(stored(plain))?.split, undefined);
  });
});
