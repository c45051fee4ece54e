import { type Database, drizzleExecutor } from '../../db/client.ts';
import { selectEntriesOfPayment, selectEntriesOfPayout } from '../../reconciliation/sql/ledger-entries.ts';
import { selectPaymentsInScope } from '../../reconciliation/sql/payments-in-scope.ts';
import { selectPayout } from '../../reconciliation/sql/payouts.ts';
import { type Settlement, settlementOf } from '../../reconciliation/settlement.ts';
import type { PaymentView, PayoutView } from '../api-schemas.ts';

/** One payout with its entries and the payment each belongs to; undefined when no run has read it. */
export async function selectPayoutView(db: Database, provider: string, payoutId: string): Promise<PayoutView | undefined> {
  const executor = drizzleExecutor(db);
  const payout = await selectPayout(executor, provider, payoutId);
  if (!payout) return undefined;
  const entries = (await selectEntriesOfPayout(executor, provider, payoutId)).filter((e) => e.entryId !== payout.balanceEntryId);
  const keys = [...new Set(entries.flatMap((e) => [e.paymentKey, e.chargeId].filter((k): k is string => k !== null)))];
  const payments = new Map((await selectPaymentsInScope(executor, provider, undefined, keys)).map((p) => [p.key, p]));
  const sum = (pick: (e: (typeof entries)[number]) => number) => entries.reduce((total, e) => total + pick(e), 0);
  return {
    payout: {
      provider,
      payout_id: payout.payoutId,
      amount: payout.amount,
      currency: payout.currency,
      status: payout.status,
      arrival_at: payout.arrivalAt?.toISOString() ?? null,
      entries_read_at: payout.entriesReadAt?.toISOString() ?? null,
    },
    entries: entries.map((e) => {
      const payment = (e.paymentKey !== null ? payments.get(e.paymentKey) : undefined) ?? (e.chargeId !== null ? payments.get(e.chargeId) : undefined);
      return {
        entry_id: e.entryId,
        kind: e.kind as PayoutView['entries'][number]['kind'],
        gateway_type: e.gatewayType,
        amount: e.amount,
        fee: e.fee,
        net: e.net,
        currency: e.currency,
        charge_id: e.chargeId,
        payment: payment
          ? {
              charge_id: payment.key,
              status: payment.status as NonNullable<PayoutView['entries'][number]['payment']>['status'],
              amount: payment.amount,
              currency: payment.currency,
            }
          : null,
      };
    }),
    totals: { gross: sum((e) => e.amount), fee: sum((e) => e.fee), net: sum((e) => e.net) },
  };
}

/** What settled for one payment, by its key; null when no ledger entry of it has been read. */
export async function selectSettlementView(db: Database, provider: string, chargeId: string): Promise<PaymentView['settlement']> {
  const entries = await selectEntriesOfPayment(drizzleExecutor(db), provider, [chargeId]);
  if (entries.length === 0) return null;
  return settlementView(settlementOf(entries));
}

function settlementView(s: Settlement): NonNullable<PaymentView['settlement']> {
  return {
    gross: s.gross,
    fee: s.fee,
    net: s.net,
    refunded: s.refunded,
    charged_back: s.chargedBack,
    currency: s.currency,
    available_at: s.availableAt?.toISOString() ?? null,
    payout_ids: s.payoutIds,
    entry_ids: s.entryIds,
  };
}
