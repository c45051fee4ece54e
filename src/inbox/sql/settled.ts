import type { SettledStatus } from '../../db/schema.ts';

/**
 * Settled: the inbox is done with the event, whether a handler processed it or ignored it (an
 * event type nobody handles). Both mean the same thing to an operator (nothing more will happen
 * to it) and both set processed_at, so lag is measured up to either.
 */
export const settledStatuses: readonly SettledStatus[] = ['processed', 'ignored'];

/** As SQL, for `status in (…)`: a literal list, so the planner walks the (status, received_at) index once per status. */
export const SETTLED_STATUS_LIST = settledStatuses.map((s) => `'${s}'`).join(', ');
