import { asc, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { type PaymentEventRow, paymentEvents } from '../../domain/payments/schema.ts';
import type { FeedCursor } from '../feed-cursor.ts';

/**
 * The next page of payment events after `after`, in (txid, position) order, and only rows whose
 * txid is below the horizon, pg_snapshot_xmin(pg_current_snapshot()): the oldest transaction still
 * running when this statement took its snapshot.
 *
 * Why not `position > $cursor`: a bigserial value is taken at INSERT and is visible before COMMIT,
 * so transaction A can take position 7, transaction B position 8 and commit first; a reader that
 * sees 8 and moves its cursor past it never sees 7 when A commits. Every transaction below the
 * horizon has committed or aborted, and every transaction that will ever write a row with a smaller
 * txid is among them (a running one has an xid at or above the horizon; a future one gets a bigger
 * one), so once a row below the horizon is read, no row can later appear before it: the cursor never
 * skips a commit. The price: one long-running writing transaction anywhere in the cluster (the
 * horizon is cluster-wide) holds the feed back until it ends; nothing is lost meanwhile.
 *
 * pg_current_snapshot() is this statement's own snapshot, so every committed row below its xmin is
 * also visible to the statement that filters by it. txid is raised to the payment's previous
 * event's (src/domain/payments/sql/payment-events.ts), which keeps each payment's events in sequence order here.
 */
export async function selectPaymentEventsAfter(db: Database, after: FeedCursor, limit: number, account?: string): Promise<PaymentEventRow[]> {
  // With an account, the (account, txid, position) index: the same order and horizon, one account's rows.
  const ofAccount = account === undefined ? sql`` : sql` and ${paymentEvents.account} = ${account}`;
  return db
    .select()
    .from(paymentEvents)
    .where(
      sql`(${paymentEvents.txid}, ${paymentEvents.position}) > (${after.txid}::xid8, ${after.position}::bigint)
        and ${paymentEvents.txid} < pg_snapshot_xmin(pg_current_snapshot())${ofAccount}`,
    )
    .orderBy(asc(paymentEvents.txid), asc(paymentEvents.position))
    .limit(limit);
}
