import type { PgBoss } from 'pg-boss';
import type { Database } from '../../db/client.ts';
import type { InboxStatus } from '../../db/schema.ts';
import type { ReplayFilter } from '../../inbox/sql/pending-events.ts';
import type { PredictedEvent, ReplayPrediction } from '../../processing/replay-dry-run.ts';
import type { AppConfig } from '../../runtime/load-config.ts';
import { plural, table } from '../output.ts';

/**
 * Runs the workers' handlers on the events a replay would select, in a transaction rolled back
 * (src/processing/replay-dry-run.ts), with the service's own handlers: its gateways' refetch
 * settings (answered from stored snapshots, never the network) and its destinations' delivery
 * hook (whose jobs roll back with the rest).
 */
export async function predictReplay(db: Database, boss: PgBoss, config: AppConfig, filter: ReplayFilter, statuses: readonly InboxStatus[]): Promise<ReplayPrediction> {
  const [{ dryRunReplay }, { createBuiltInHandlers }, { createHandlerRegistry }, { createDeliveryAnnouncer }, { gatewayApiTargets }] = await Promise.all([
    import('../../processing/replay-dry-run.ts'),
    import('../../processing/built-in-handlers.ts'),
    import('../../processing/handlers.ts'),
    import('../../delivery/enqueue-deliveries.ts'),
    import('../../refetch/settings.ts'),
  ]);
  const refetched = new Set(gatewayApiTargets(config.providers.values()).map((target) => target.provider));
  const announceChanges = createDeliveryAnnouncer(boss, config.destinations);
  return dryRunReplay(
    {
      db,
      providers: config.providers,
      refetches: { has: (provider) => refetched.has(provider) },
      handlers: (refetcher) => createHandlerRegistry(createBuiltInHandlers({ refetcher, announceChanges })),
    },
    filter,
    statuses,
  );
}

function outcomeText(event: PredictedEvent): string {
  if (event.outcome === 'failed') return `fails: ${event.error ?? ''}`;
  if (event.outcome === 'skipped') return 'skipped (changed since it was selected)';
  return event.outcome;
}

/** The decision as a word, and its from → to where it has one. */
function decisionText(event: PredictedEvent): string {
  const decision = event.decision;
  if (!decision) return '-';
  const detail = decision.detail as { from?: string | null; to?: string };
  return detail.to === undefined ? decision.decision : `${decision.decision} (${detail.from ?? 'new'} → ${detail.to})`;
}

function refetchText(event: PredictedEvent): string {
  if (!event.refetch) return '';
  return event.refetch.from === 'stored_snapshot' ? `snapshot of ${event.refetch.observedAt.toISOString()}` : 'payload';
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
    outcomeText(e),
    decisionText(e),
    e.payment ? `${e.payment.provider}:${e.payment.chargeId}` : '-',
    ...(refetching ? [refetchText(e) || '-'] : []),
  ]);
  lines.push(table(['EVENT', 'TYPE', 'NOW', 'REPLAY', 'DECISION', 'PAYMENT', ...(refetching ? ['REFETCH FROM'] : [])], eventRows));
  if (payments.length > 0) {
    const changing = payments.filter((p) => p.now !== p.after).length;
    lines.push('', `Per payment (${changing} of ${plural(payments.length, 'payment')} would change status):`);
    lines.push(table(['PAYMENT', 'NOW', 'AFTER REPLAY'], payments.map((p) => [`${p.provider}:${p.chargeId}`, p.now ?? '(none)', p.after ?? '(none)'])));
  }
  if (refetching) {
    lines.push(
      '',
      'REFETCH FROM: the replay re-reads these charges from the gateway; the dry run calls no gateway and used the newest snapshot the inbox keeps, or else the event\'s payload. If the charge changed at the gateway since, the replay decides by what it says now.',
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
