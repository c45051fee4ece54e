import type { EventDecision } from './event-decision.ts';
import type { KnownFact, PaymentState } from './fold.ts';
import { paymentStatuses } from './payment-fact.ts';
import type { PaymentRow } from './schema.ts';

/**
 * Where a payment's fold starts (fold.ts, "Past its facts").
 *
 * A payment's facts are kept for as long as it is active, and pruned once it has been quiet for
 * its provider's keyRetentionDays (operations/fact-retention.ts). What they folded to is kept on
 * the payment row then, as its checkpoint: the whole PaymentState, whatever fields it has. A later
 * fold starts from the checkpoint and takes only the facts after its time (lastGatewayEventAt):
 * the facts up to that time are what the checkpoint sums up, or history it can no longer place,
 * so an event from then (a resend once its dedupe key is gone too, a late webhook request) changes
 * nothing and is recorded `stale`. Without a checkpoint: the application's row in `require` mode,
 * nothing in `create` mode; and for a payment whose history was lost before facts were kept
 * (isHistoryLost), its row, kept as its checkpoint from then on.
 */

const DATE_TAG = '$date';

/**
 * The state as JSON, every Date tagged (`{"$date": iso}`) so it comes back a Date: a field added
 * to PaymentState is kept without a change here.
 */
export function encodeCheckpoint(state: PaymentState): string {
  return JSON.stringify(state, function tagDates(this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { [DATE_TAG]: raw.toISOString() } : value;
  });
}

function untag(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(untag);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === DATE_TAG && typeof entries[0]![1] === 'string') return new Date(entries[0]![1]);
  return Object.fromEntries(entries.map(([key, inner]) => [key, untag(inner)]));
}

/** The checkpoint a row holds (payments.checkpoint, as the driver parsed the jsonb), or null. */
export function decodeCheckpoint(value: unknown): PaymentState | null {
  if (value === null || value === undefined) return null;
  const state = untag(typeof value === 'string' ? JSON.parse(value) : value) as PaymentState;
  // A checkpoint this version cannot read must stop the fold, not start it from a wrong state.
  if (!paymentStatuses.includes(state.status) || typeof state.amountRefunded !== 'number') {
    throw new Error(`payments.checkpoint holds no payment state this version can read: ${JSON.stringify(value)}`);
  }
  // A checkpoint written before the split was part of the state said none.
  return { ...state, split: state.split ?? null };
}

/** The state a `require`-mode fold starts from: the row as the application created it. */
function applicationBaseline(row: PaymentRow): PaymentState {
  return {
    status: row.initialStatus ?? row.status,
    amount: row.amount,
    amountRefunded: 0,
    currency: row.currency,
    lastGatewayEventAt: null,
    inquiryOpen: false,
    statusBeforeDispute: null,
    split: null,
  };
}

/** Where the payment's fold starts: its checkpoint, else the application's row in `require` mode, else nothing. */
export function foldStart(row: PaymentRow, require: boolean): PaymentState | null {
  return decodeCheckpoint(row.checkpoint) ?? (require ? applicationBaseline(row) : null);
}

/**
 * A payment the gateway moved (last_gateway_event_at is set) with no checkpoint and no fact known
 * at all lost its history before facts were kept: an earlier version purged its rows and their
 * facts with them. Its row is then the only account of it, and the fold goes on from that as from
 * a checkpoint (kept as one), instead of from nothing. The caller knows whether any fact is known.
 */
export function isHistoryLost(row: PaymentRow): boolean {
  return row.checkpoint === null && row.lastGatewayEventAt !== null;
}

/** Whether a fold from `start` can place the fact: one after the state's own time (none: any fact). */
export function isAfterStart(start: PaymentState | null, known: KnownFact): boolean {
  const since = start?.lastGatewayEventAt;
  return since === null || since === undefined || known.fact.occurredAt.getTime() > since.getTime();
}

/** What an event from before the checkpoint is recorded as: no news, the checkpoint's time is the newer one known. */
export function beforeCheckpoint(known: KnownFact, start: PaymentState): EventDecision {
  return {
    decision: 'stale',
    detail: { status: known.fact.status, occurredAt: known.fact.occurredAt.toISOString(), knownOccurredAt: start.lastGatewayEventAt?.toISOString() ?? null },
  };
}
