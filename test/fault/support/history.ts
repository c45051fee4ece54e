/**
 * The record a fault test keeps of every delivery attempt it made, and the checker that classifies
 * what the database holds against it — the way Jepsen's queue checkers classify a history:
 *
 * - lost:        an event that got a 200 at least once and is not in the inbox (or, once processing
 *                is checked, never ended processed);
 * - duplicated:  an event with more than one inbox row, or more than one effect;
 * - unexpected:  an inbox row for an event never sent, or an answer outside the allowed statuses;
 * - in doubt:    stored by an attempt that got no 200 (the row is older than the start of the
 *                event's first acknowledged attempt: the answer died with the process, and the
 *                gateway's retry was a duplicate) — allowed, and reported so a test shows that its
 *                faults really hit the commit window.
 *
 * Every "0" a fault test asserts is a count taken from this record.
 */

export type AttemptOutcome = number | 'network_error' | 'timeout';

export interface Attempt {
  eventId: string;
  startedAt: number;
  endedAt: number;
  outcome: AttemptOutcome;
}

export class DeliveryHistory {
  readonly attempts: Attempt[] = [];
  readonly sent = new Set<string>();

  record(attempt: Attempt): void {
    this.attempts.push(attempt);
    this.sent.add(attempt.eventId);
  }

  /** Events that got a 200 at least once: the inbox promised to keep these. */
  acknowledged(): Set<string> {
    return new Set(this.attempts.filter((a) => a.outcome === 200).map((a) => a.eventId));
  }

  outcomeCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { outcome } of this.attempts) counts[String(outcome)] = (counts[String(outcome)] ?? 0) + 1;
    return counts;
  }
}

/** What the database holds for each event: its inbox rows and, where known, its effects. */
export interface StoredState {
  /** event id → number of inbox rows. */
  rows: Map<string, number>;
  /** event id → number of effects (payment transitions); absent when effects are not checked. */
  effects?: Map<string, number>;
  /** event id → inbox status. */
  statuses?: Map<string, string>;
  /** event id → when its row was written (transaction start, epoch ms). */
  storedAt?: Map<string, number>;
}

export interface CheckOptions {
  /** Statuses an attempt may end with; anything else is unexpected (network errors and timeouts always may). */
  allowedStatuses: readonly number[];
  /** Require every acknowledged event to have ended `processed` with exactly one effect. */
  requireProcessedOnce?: boolean;
}

export interface CheckResult {
  sent: number;
  acknowledged: number;
  stored: number;
  lost: string[];
  duplicated: string[];
  unexpected: string[];
  inDoubt: string[];
  attempts: number;
  outcomes: Record<string, number>;
}

export function checkHistory(history: DeliveryHistory, state: StoredState, options: CheckOptions): CheckResult {
  const acknowledged = history.acknowledged();
  const lost: string[] = [];
  const duplicated: string[] = [];
  const unexpected: string[] = [];
  const inDoubt: string[] = [];
  const firstAckStartedAt = new Map<string, number>();
  for (const attempt of history.attempts) {
    if (attempt.outcome !== 200) continue;
    const known = firstAckStartedAt.get(attempt.eventId);
    if (known === undefined || attempt.startedAt < known) firstAckStartedAt.set(attempt.eventId, attempt.startedAt);
  }
  for (const eventId of acknowledged) {
    const rows = state.rows.get(eventId) ?? 0;
    if (rows === 0) lost.push(eventId);
    else if (options.requireProcessedOnce) {
      const effects = state.effects?.get(eventId) ?? 0;
      if (state.statuses?.get(eventId) !== 'processed' || effects === 0) lost.push(eventId);
    }
  }
  for (const [eventId, rows] of state.rows) {
    if (!history.sent.has(eventId)) unexpected.push(`row for unsent event ${eventId}`);
    if (rows > 1) duplicated.push(eventId);
    const storedAt = state.storedAt?.get(eventId);
    const ackedFrom = firstAckStartedAt.get(eventId);
    if (storedAt !== undefined && (ackedFrom === undefined || storedAt < ackedFrom - 1)) inDoubt.push(eventId);
  }
  for (const [eventId, effects] of state.effects ?? []) {
    if (effects > 1 && !duplicated.includes(eventId)) duplicated.push(eventId);
  }
  const allowed = new Set<AttemptOutcome>([...options.allowedStatuses, 'network_error', 'timeout']);
  for (const attempt of history.attempts) {
    if (!allowed.has(attempt.outcome)) unexpected.push(`${attempt.eventId} answered ${attempt.outcome}`);
  }
  return {
    sent: history.sent.size,
    acknowledged: acknowledged.size,
    stored: state.rows.size,
    lost,
    duplicated,
    unexpected,
    inDoubt,
    attempts: history.attempts.length,
    outcomes: history.outcomeCounts(),
  };
}

/** One line for the test log: the counts the assertions are about. */
export function summarize(name: string, result: CheckResult): string {
  return (
    `${name}: sent ${result.sent}, acknowledged ${result.acknowledged}, stored ${result.stored}, ` +
    `lost ${result.lost.length}, duplicated ${result.duplicated.length}, unexpected ${result.unexpected.length}, ` +
    `in doubt ${result.inDoubt.length}; attempts ${result.attempts} ${JSON.stringify(result.outcomes)}`
  );
}
