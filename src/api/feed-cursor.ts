/**
 * The feed's cursor: the (txid, position) of the last event a page returned, opaque to the
 * application (base64url of `v1:<txid>:<position>`), so the encoding may change with the version
 * prefix without a client noticing. A cursor from before any event is `FEED_START`.
 */
export interface FeedCursor {
  /** xid8 as decimal text: up to 2^64 − 1, beyond a JavaScript number. */
  txid: string;
  position: number;
}

export const FEED_START: FeedCursor = { txid: '0', position: 0 };

const MAX_XID8 = 2n ** 64n - 1n;
const CURSOR_TEXT = /^v1:(0|[1-9]\d{0,19}):(0|[1-9]\d{0,15})$/;

export function encodeFeedCursor(cursor: FeedCursor): string {
  return Buffer.from(`v1:${cursor.txid}:${cursor.position}`, 'utf8').toString('base64url');
}

/** The cursor a string names, or undefined when it is not one this service issued. */
export function decodeFeedCursor(value: string): FeedCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) return undefined;
  const match = CURSOR_TEXT.exec(Buffer.from(value, 'base64url').toString('utf8'));
  if (!match) return undefined;
  const position = Number(match[2]);
  if (BigInt(match[1]!) > MAX_XID8 || !Number.isSafeInteger(position)) return undefined;
  return { txid: match[1]!, position };
}
