/**
 * The feed's cursor: the (txid, position) of the last event a page returned, and the cluster whose
 * transaction ids those are, opaque to the application (base64url of
 * `v2:<system identifier>:<txid>:<position>`), so the encoding may change with the version prefix
 * without a client noticing. A cursor from before any event is `FEED_START`.
 *
 * Why the cluster: a txid means something only in the cluster that assigned it. The inbox restored
 * into another cluster (pg_dump and restore, a move) numbers its transactions afresh, and a saved
 * cursor there would select nothing, or the wrong rows, without anyone noticing. A `v1:<txid>:<position>`
 * cursor, issued before the cluster was named, cannot be told apart: it is read as this cluster's.
 */
export interface FeedCursor {
  /** xid8 as decimal text: up to 2^64 − 1, beyond a JavaScript number. */
  txid: string;
  position: number;
}

/** A cursor as a client sent it back: where it points, and which cluster issued it. */
export interface ReturnedFeedCursor extends FeedCursor {
  /** The issuing cluster's system identifier (sql/cluster-identifier.ts); undefined for a v1 cursor, which does not say. */
  cluster: string | undefined;
}

export const FEED_START: FeedCursor = { txid: '0', position: 0 };

const MAX_XID8 = 2n ** 64n - 1n;
// pg_control_system() shows the 64-bit identifier as a signed bigint: a minus sign is possible.
const CURSOR_TEXT = /^(?:v1|v2:(-?[1-9]\d{0,19})):(0|[1-9]\d{0,19}):(0|[1-9]\d{0,15})$/;

export function encodeFeedCursor(cursor: FeedCursor, cluster: string): string {
  return Buffer.from(`v2:${cluster}:${cursor.txid}:${cursor.position}`, 'utf8').toString('base64url');
}

/** The cursor a string names, or undefined when it is not one this service issued. */
export function decodeFeedCursor(value: string): ReturnedFeedCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,96}$/.test(value)) return undefined;
  const match = CURSOR_TEXT.exec(Buffer.from(value, 'base64url').toString('utf8'));
  if (!match) return undefined;
  const [, cluster, txid, positionText] = match;
  const position = Number(positionText);
  if (BigInt(txid!) > MAX_XID8 || !Number.isSafeInteger(position)) return undefined;
  return { txid: txid!, position, cluster };
}
