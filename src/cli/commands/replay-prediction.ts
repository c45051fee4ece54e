import { type PredictedEvent, type ReplayPrediction, describePredictedOutcome, describeRefetchStandIn } from '../../processing/replay-dry-run.ts';
import { plural, table } from '../output.ts';

/** The decision as a word, and its from → to where it has one. */
function decisionText(event: PredictedEvent): string {
  const decision = event.decision;
  if (!decision) return '-';
  const detail = decision.detail as { from?: string | null; to?: string };
  return detail.to === undefined ? decision.decision : `${decision.decision} (${detail.from ?? 'new'} → ${detail.to})`;
}

/** The dry run's answer as an operator reads it: per event, then per payment. */
export function describePrediction(prediction: ReplayPrediction): string[] {
  const { events, payments } = prediction;
  if (events.length === 0) return [];
  const lines = ['', 'Per event, in the order the replay queues them:'];
  const refetching = events.some((e) => e.refetch);
  const eventRows = events.map((e) => [
    e.eventId,
    e.eventType,
    e.status,
    describePredictedOutcome(e),
    decisionText(e),
    e.payment ? `${e.payment.provider}:${e.payment.chargeId}` : '-',
    ...(refetching ? [describeRefetchStandIn(e) || '-'] : []),
  ]);
  lines.push(table(['EVENT', 'TYPE', 'NOW', 'REPLAY', 'DECISION', 'PAYMENT', ...(refetching ? ['REFETCH FROM'] : [])], eventRows));
  if (payments.length > 0) {
    const changing = payments.filter((p) => p.now !== p.after).length;
    lines.push('', `Per payment (${changing} of ${plural(payments.length, 'payment')} would change status):`);
    lines.push(
      table(
        ['PAYMENT', 'NOW', 'AFTER REPLAY'],
        payments.map((p) => [`${p.provider}:${p.chargeId}`, p.now ?? '(none)', p.after ?? '(none)']),
      ),
    );
  }
  if (refetching) {
    lines.push(
      '',
      "REFETCH FROM: the replay re-reads these charges from the gateway; the dry run calls no gateway and used the newest snapshot the inbox keeps, or else the event's payload. If the charge changed at the gateway since, the replay decides by what it says now.",
    );
  }
  const paymentsNamed = events.flatMap((e) => (e.payment ? [`${e.payment.provider}:${e.payment.chargeId}`] : []));
  if (new Set(paymentsNamed).size < paymentsNamed.length) {
    lines.push(
      '',
      'Several events of one payment: predicted in the order the replay queues them (oldest first). The payment ends the same in any order; pg-boss does not promise that order, so which of them is processed and which ignored may differ.',
    );
  }
  return lines;
}
