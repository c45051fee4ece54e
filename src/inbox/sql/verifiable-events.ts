import type { SqlExecutor } from '../../db/client.ts';
import { Values, dateOf, epochMs, where } from './statement.ts';

/** What `inboxctl verify` reads of an event: the exact bytes and the stored proof (JSON text, null before proofs were kept). */
export interface VerifiableEvent {
  id: number;
  provider: string;
  eventId: string;
  eventType: string;
  receivedAt: Date;
  rawBody: Buffer;
  verificationJson: string | null;
}

interface Row {
  id: number;
  provider: string;
  event_id: string;
  event_type: string;
  received_at_ms: number;
  raw_body: Buffer;
  verification_json: string | null;
}

const COLUMNS = `id::float8 as id, provider, event_id, event_type, ${epochMs('received_at')} as received_at_ms, raw_body, verification::text as verification_json`;

const toVerifiable = (row: Row): VerifiableEvent => ({
  id: row.id,
  provider: row.provider,
  eventId: row.event_id,
  eventType: row.event_type,
  receivedAt: dateOf(row.received_at_ms),
  rawBody: Buffer.from(row.raw_body),
  verificationJson: row.verification_json,
});

export async function findVerifiableEvent(db: SqlExecutor, id: number): Promise<VerifiableEvent | undefined> {
  const { rows } = await db.executeSql<Row>(`select ${COLUMNS} from webhook_inbox where id = $1`, [id]);
  return rows[0] && toVerifiable(rows[0]);
}

export interface VerifiablePage {
  since: Date;
  provider?: string;
  /** The last id of the previous page: pages walk the primary key. */
  afterId: number;
  limit: number;
}

/**
 * The next page of events received since a time, by id. An audit reads every row in the window
 * once (raw bodies included), a page at a time so memory stays flat; there is no index on
 * received_at alone, so the first page may walk older rows' primary-key entries to reach it. The
 * table's own id, not the output's `id::float8`, which no index has: ordered by that, every page
 * sorted the whole window.
 */
export async function findVerifiableEventsSince(db: SqlExecutor, page: VerifiablePage): Promise<VerifiableEvent[]> {
  const values = new Values();
  const { rows } = await db.executeSql<Row>(
    `select ${COLUMNS} from webhook_inbox
     ${where([
       `webhook_inbox.id > ${values.add(page.afterId)}`,
       `received_at >= ${values.add(page.since.toISOString())}::timestamptz`,
       page.provider === undefined ? undefined : `provider = ${values.add(page.provider)}`,
     ])}
     order by webhook_inbox.id
     limit ${values.add(page.limit)}`,
    values.list,
  );
  return rows.map(toVerifiable);
}
