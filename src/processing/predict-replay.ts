import type { PgBoss } from 'pg-boss';
import type { Database } from '../db/client.ts';
import type { InboxStatus } from '../db/schema.ts';
import { createDeliveryAnnouncer } from '../delivery/enqueue-deliveries.ts';
import type { ReplayFilter } from '../inbox/sql/pending-events.ts';
import { gatewayApiTargets } from '../refetch/settings.ts';
import type { AppConfig } from '../config/load-config.ts';
import { createBuiltInHandlers } from './built-in-handlers.ts';
import { createHandlerRegistry } from './handlers.ts';
import { type ReplayPrediction, dryRunReplay } from './replay-dry-run.ts';

/**
 * Runs the workers' handlers on the events a replay would select, in a transaction rolled back
 * (replay-dry-run.ts), with the service's own handlers: its gateways' refetch settings (answered
 * from stored snapshots, never the network) and its destinations' delivery hook (whose jobs roll
 * back with the rest). `inboxctl replay --dry-run` and the dashboard's replay preview both ask it.
 */
export async function predictReplay(
  db: Database,
  boss: PgBoss,
  config: AppConfig,
  filter: ReplayFilter,
  statuses: readonly InboxStatus[],
): Promise<ReplayPrediction> {
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
