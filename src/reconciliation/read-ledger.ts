import { createHash } from 'node:crypto';
import { type Database, drizzleExecutor } from '../db/client.ts';
import { GatewayResponseShapeError } from '../gateways/shared/gateway-api.ts';
import type { GatewayLedger, LedgerEntry, LedgerPage, UnreadableEntry } from '../gateways/shared/ledger.ts';
import { getWaitingOutRateLimits } from '../refetch/patient-get.ts';
import type { Finding } from './finding.ts';
import { upsertFindings } from './sql/findings.ts';
import { upsertLedgerEntries } from './sql/ledger-entries.ts';
import { type RunRow, recordPage } from './sql/runs.ts';

export interface LedgerReaderDeps {
  db: Database;
  provider: string;
  /**
   * The account whose ledger is read, on its behalf (a Stripe Connect account, with Stripe-Account;
   * an Asaas subaccount, with its own key): `get` must read as that account. Null: the provider's own.
   */
  account: string | null;
  ledger: GatewayLedger;
  /** A GET of the provider's API through the refetch layer (rate limit, breaker, timeout, key), as `account`. */
  get(path: string): Promise<unknown>;
  clock: () => Date;
  sleep(ms: number): Promise<void>;
  /** A line of progress (a 429 wait), for stderr or the log. */
  notice(text: string): void;
}

/** What one run's reading did, beside the run row's counters. */
export interface ReadProgress {
  rateLimitedWaits: number;
  gatewayCalls: number;
  /** The findings recorded for entries the reader could not read. */
  unreadable: Finding[];
}

/**
 * The deps a run reads the gateway through: each GET counted in the run's progress, and labelled
 * `reconcile` in the refetch layer's metrics, so a run's report says how many calls it cost.
 */
export function countedGatewayReads(deps: LedgerReaderDeps, progress: ReadProgress) {
  return {
    ...deps,
    operation: 'reconcile',
    get: (path: string) => {
      progress.gatewayCalls += 1;
      return deps.get(path);
    },
  };
}

/** An excerpt of what the gateway sent, bounded: evidence, not a copy of a whole page. */
const EXCERPT_CHARS = 500;

function unreadableFinding(entry: UnreadableEntry): Finding {
  const text = (() => {
    try {
      return JSON.stringify(entry.raw) ?? String(entry.raw);
    } catch {
      return String(entry.raw);
    }
  })();
  const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
  // An entry without an id is told apart by what it said: the same text listed again is the same finding.
  const subject = entry.entryId ?? `unreadable:${createHash('sha256').update(text).digest('hex').slice(0, 40)}`;
  return {
    kind: 'unreadable_entry',
    subject,
    paymentId: undefined,
    evidence: { kind: 'unreadable_entry', entryId: entry.entryId ?? null, reason: entry.reason, excerpt },
  };
}

/**
 * A page's readable entries upserted, its unreadable ones recorded as findings, and the run's
 * cursor moved past it, in one transaction: a run stopped after any page resumes at the next one,
 * and a page read twice changes no count.
 */
async function storePage(deps: LedgerReaderDeps, run: RunRow, page: LedgerPage, payoutId: string | undefined, progress: ReadProgress): Promise<void> {
  const entries: LedgerEntry[] = page.entries.flatMap((read) => (read.ok ? [payoutId === undefined ? read.entry : { ...read.entry, payoutId }] : []));
  const unreadable = page.entries.flatMap((read) => (read.ok ? [] : [unreadableFinding(read.unreadable)]));
  const now = deps.clock();
  await deps.db.transaction(async (tx) => {
    const executor = drizzleExecutor(tx);
    const inserted = await upsertLedgerEntries(executor, deps.provider, entries, now, deps.account);
    await upsertFindings(executor, deps.provider, run.id, unreadable, now, deps.account);
    await recordPage(executor, run.id, { nextCursor: page.nextCursor ?? null, read: page.entries.length, inserted, unreadable: unreadable.length });
    run.pages += 1;
    run.entriesRead += page.entries.length;
    run.entriesNew += inserted;
    run.unreadable += unreadable.length;
  });
  progress.unreadable.push(...unreadable);
}

/**
 * Reads every page not yet read of the run's scope (the window's entries, or one payout's), from
 * the run's cursor: a resumed run starts where it stopped. A page that is not the list the
 * reader knows stops the run (no entry of it could be trusted); an entry that is not readable
 * is a finding and the run goes on.
 */
export async function readLedgerPages(deps: LedgerReaderDeps, run: RunRow, progress: ReadProgress): Promise<void> {
  const payoutId = run.scope === 'payout' ? run.payoutId! : undefined;
  const pathOf = (cursor: string | undefined) =>
    payoutId === undefined ? deps.ledger.entriesPath({ since: run.since, until: run.until }, cursor) : deps.ledger.payouts!.payoutEntriesPath(payoutId, cursor);
  // A run that read pages and has no cursor left has read them all (it stopped while matching).
  if (run.pages > 0 && run.cursor === null) return;
  let cursor = run.cursor ?? undefined;
  const patient = countedGatewayReads(deps, progress);
  for (;;) {
    const pagePath = pathOf(cursor);
    const page = deps.ledger.readEntries(await getWaitingOutRateLimits(patient, pagePath, progress));
    // An API that ignores the cursor would answer the same page forever: stop instead.
    if (page.nextCursor !== undefined && page.nextCursor === cursor)
      throw new GatewayResponseShapeError(deps.provider, `the ledger answered the same page again (cursor ${cursor})`);
    await storePage(deps, run, page, payoutId, progress);
    if (page.nextCursor === undefined) return;
    cursor = page.nextCursor;
  }
}
