/**
 * The inbox statuses each operation may act on, in a module of their own (no database imports) so
 * the CLI can describe its options without loading drizzle.
 */

/** A replay puts finished-but-unsuccessful events back in line; pending ones are the sweeper's. */
export const replayableStatuses = ['failed', 'ignored'] as const;
export type ReplayableStatus = (typeof replayableStatuses)[number];

/** Pending rows are never purged (they are owed processing); failed ones only when asked. */
export const purgeableStatuses = ['processed', 'ignored', 'failed'] as const;
export type PurgeableStatus = (typeof purgeableStatuses)[number];
export const retentionStatuses: readonly PurgeableStatus[] = ['processed', 'ignored'];
