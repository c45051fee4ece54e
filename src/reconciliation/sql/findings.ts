import type { SqlExecutor } from '../../db/client.ts';
import type { Finding, FindingEvidence, FindingKind } from '../finding.ts';
import { withoutNul } from '../without-nul.ts';

/**
 * Each finding once per (provider, kind, subject): found again it is the same row (its evidence
 * and last run updated, reopened if it had been resolved), with the account of the run that found
 * it (null: the provider's own). Returns how many were not open before.
 */
export async function upsertFindings(
  db: SqlExecutor,
  provider: string,
  runId: number,
  findings: readonly Finding[],
  at: Date,
  account: string | null = null,
): Promise<number> {
  if (findings.length === 0) return 0;
  const { rows } = await db.executeSql<{ opened: boolean }>(
    `insert into reconciliation_findings as f (provider, kind, subject, payment_id, account, evidence, first_run_id, last_run_id, first_found_at, last_found_at)
     select $1, t.kind, t.subject, t.payment_id, $8, t.evidence::jsonb, $2, $2, $3, $3
       from unnest($4::text[], $5::text[], $6::int8[], $7::text[]) as t(kind, subject, payment_id, evidence)
     on conflict (provider, kind, subject) do update set payment_id = excluded.payment_id, account = excluded.account, evidence = excluded.evidence, last_run_id = excluded.last_run_id,
       last_found_at = excluded.last_found_at, status = 'open', resolved_at = null
     returning (xmax = 0 or f.status <> 'open') as opened`,
    [
      provider,
      runId,
      at.toISOString(),
      findings.map((f) => f.kind),
      findings.map((f) => f.subject),
      findings.map((f) => (f.paymentId === undefined ? null : String(f.paymentId))),
      findings.map((f) => JSON.stringify(withoutNul(f.evidence))),
      account,
    ],
  );
  return rows.filter((row) => row.opened).length;
}

/**
 * Open findings about a subject this run looked at, of the kinds it decides, that it did not find
 * again: no longer true (a backfilled webhook, a late credit), so resolved.
 */
export async function resolveFindingsNotFound(
  db: SqlExecutor,
  provider: string,
  kinds: readonly FindingKind[],
  evaluated: readonly string[],
  found: readonly Finding[],
  at: Date,
): Promise<number> {
  if (evaluated.length === 0) return 0;
  const { rows } = await db.executeSql(
    `update reconciliation_findings f set status = 'resolved', resolved_at = $5
      where f.provider = $1 and f.status = 'open' and f.kind = any($2::text[]) and f.subject = any($3::text[])
        and not exists (select 1 from unnest($4::text[]) as k(key) where k.key = f.kind || ' ' || f.subject)
      returning f.id`,
    [provider, [...kinds], [...evaluated], found.map((f) => `${f.kind} ${f.subject}`), at.toISOString()],
  );
  return rows.length;
}

export interface StoredFinding {
  id: number;
  provider: string;
  kind: FindingKind;
  subject: string;
  paymentId: number | null;
  status: 'open' | 'resolved';
  evidence: FindingEvidence;
  firstFoundAt: Date;
  lastFoundAt: Date;
  resolvedAt: Date | null;
}

const COLUMNS = `id::float8 as id, provider, kind, subject, payment_id::float8 as payment_id, status, evidence::text as evidence,
  extract(epoch from first_found_at) * 1000 as first_ms, extract(epoch from last_found_at) * 1000 as last_ms, extract(epoch from resolved_at) * 1000 as resolved_ms`;

function toFinding(row: Record<string, unknown>): StoredFinding {
  const time = (value: unknown) => (value === null ? null : new Date(Number(value)));
  return {
    id: Number(row.id),
    provider: row.provider as string,
    kind: row.kind as FindingKind,
    subject: row.subject as string,
    paymentId: row.payment_id === null ? null : Number(row.payment_id),
    status: row.status as StoredFinding['status'],
    evidence: JSON.parse(row.evidence as string) as FindingEvidence,
    firstFoundAt: time(row.first_ms)!,
    lastFoundAt: time(row.last_ms)!,
    resolvedAt: time(row.resolved_ms),
  };
}

/** Open findings, newest first, of one provider or all; at most `limit`. */
export async function selectOpenFindings(db: SqlExecutor, options: { provider?: string; limit: number }): Promise<StoredFinding[]> {
  const { rows } = await db.executeSql(
    `select ${COLUMNS} from reconciliation_findings where status = 'open' and ($1::text is null or provider = $1) order by last_found_at desc, id desc limit $2`,
    [options.provider ?? null, options.limit],
  );
  return rows.map(toFinding);
}

/** The open findings that concern one payment. */
export async function selectFindingsOfPayment(db: SqlExecutor, paymentId: number): Promise<StoredFinding[]> {
  const { rows } = await db.executeSql(`select ${COLUMNS} from reconciliation_findings where payment_id = $1 and status = 'open' order by id`, [paymentId]);
  return rows.map(toFinding);
}

/** Open findings per provider and kind: the gauge. */
export async function countOpenFindings(db: SqlExecutor): Promise<Array<{ provider: string; kind: FindingKind; open: number }>> {
  const { rows } = await db.executeSql<{ provider: string; kind: FindingKind; open: number }>(
    "select provider, kind, count(*)::float8 as open from reconciliation_findings where status = 'open' group by provider, kind",
  );
  return rows.map((row) => ({ ...row, open: Number(row.open) }));
}
