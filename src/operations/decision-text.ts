import type { EventDecisionName } from '../db/schema.ts';

/**
 * One line saying why an event ended as it did (`inboxctl show`, the dashboard's event page),
 * from webhook_inbox.decision and decision_detail, its times written by `time` (default: as stored). The detail is read defensively: a row may
 * carry what an older version or a custom handler wrote.
 */
export function describeDecision(decision: EventDecisionName | null, detail: unknown, time: (iso: string) => string = (iso) => iso): string {
  if (decision === null) return '-';
  const d = (typeof detail === 'object' && detail !== null ? detail : {}) as Record<string, unknown>;
  const text = (key: string) => (typeof d[key] === 'string' ? (d[key] as string) : '?');
  // The detail's times as the caller shows times (the dashboard has one format; inboxctl ISO).
  const when = (key: string) => (typeof d[key] === 'string' ? time(d[key] as string) : '?');
  switch (decision) {
    case 'applied': {
      // An inquiry moves no status: say what it did instead of "paid → paid".
      const inquiry = d.inquiry === 'opened' || d.inquiry === 'closed' ? `, inquiry ${d.inquiry}` : '';
      return d.from === null ? `applied: created the payment as ${text('to')}${inquiry}` : `applied: ${text('from')} → ${text('to')}${inquiry}`;
    }
    case 'stale':
      return `stale: says ${text('status')} at ${when('occurredAt')}; nothing new, the payment already knows up to ${d.knownOccurredAt === null ? '-' : when('knownOccurredAt')}`;
    case 'rejected_transition':
      return `rejected_transition: ${text('from')} → ${text('to')} is not allowed (event of ${when('occurredAt')})`;
    case 'rejected_amount':
      return `rejected_amount: says ${text('status')} with ${String(d.amountRefunded ?? '?')} refunded of an amount of ${String(d.amount ?? '?')} (event of ${when('occurredAt')}); the payment is left as it was: check the charge at the gateway`;
    case 'superseded':
      return `superseded: says ${text('status')} at ${when('occurredAt')}; the gateway read of ${when('observedAt')} (inbox id ${String(d.snapshotInboxId ?? '?')}) decided instead`;
    case 'refetched':
      // `changed` is absent on rows decided before it was recorded: those keep the from → to form.
      if (d.changed === false) {
        // An older read than facts already known: they apply after it, so the payment may differ from what it said.
        const already = d.status === d.to ? `the payment already was ${text('to')}` : `events after that read keep the payment ${text('to')}`;
        return `refetched: the gateway said ${text('status')} when read at ${when('observedAt')}; ${already}, nothing to change`;
      }
      return `refetched: the gateway said ${text('status')} when read at ${when('observedAt')} (payment ${d.from === null ? 'created' : text('from')} → ${text('to')})`;
    case 'not_a_payment_event':
      return `not_a_payment_event: no handler for ${text('kind')}`;
    case 'unknown_payment':
      return `unknown_payment: no payment ${text('chargeId')} yet (require mode: the application creates it)`;
  }
}
