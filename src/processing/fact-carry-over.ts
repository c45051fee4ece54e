import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type Database, drizzleExecutor } from '../db/client.ts';
import type { PaymentFact } from '../domain/payments/payment-fact.ts';
import { fromStoredFact, toStoredFact } from '../domain/payments/stored-fact.ts';
import {
  type CarriedRow,
  type FactToKeep,
  insertFactsIfAbsent,
  lockCarryOverProgress,
  recordCarriedThrough,
  selectRowsToCarry,
  settledAtOf,
} from '../inbox/sql/carry-over.ts';
import { toInboxEvent } from '../inbox/sql/event-columns.ts';
import type { ProviderDriver } from '../gateways/shared/webhook-driver.ts';

/** Inbox ids per transaction: a few thousand rows, a fraction of a second, then writers go on. */
const DEFAULT_IDS_PER_BATCH = 5_000;
const RETRY_DELAY_MS = 5_000;

export interface FactCarryOverDeps {
  db: Database;
  /** The configured providers, whose drivers read a payload whose fact was never recorded. */
  providers: ReadonlyMap<string, { driver: Pick<ProviderDriver, 'toPaymentFact'> }>;
  logger: Logger;
  idsPerBatch?: number;
}

/** One range carried: how far, how many facts kept, and how many rows no configured driver could read. */
export interface CarriedRange {
  finished: boolean;
  carriedThrough: number;
  target: number;
  facts: number;
  unreadable: number;
}

/** The fact a settled row meant: the one recorded on it, else its payload read by its driver (null: none). */
function factToKeep(row: CarriedRow, driver: Pick<ProviderDriver, 'toPaymentFact'> | undefined): FactToKeep | 'unreadable' | null {
  const recorded = fromStoredFact(row.fact);
  let fact: PaymentFact | null | undefined = recorded;
  if (!recorded) {
    if (row.payload === null) return null;
    if (!driver) return 'unreadable';
    fact = driver.toPaymentFact(toInboxEvent(row));
  }
  if (!fact) return null;
  const event = toInboxEvent(row);
  return {
    provider: event.provider,
    eventId: event.eventId,
    inboxId: event.id,
    eventType: event.eventType,
    paymentKey: fact.chargeId,
    legacyKey: fact.legacyChargeId ?? null,
    occurredAt: event.occurredAt,
    // As recorded, when it was: a snapshot's fact is exactly what the fold saw.
    fact: recorded ? row.fact : toStoredFact(fact),
    decision: row.decision,
    decisionDetail: row.decision_detail,
    recordedAt: settledAtOf(row),
  };
}

/**
 * Carries the next range of inbox ids over, in one transaction that holds the progress row (two
 * instances carry ranges one after the other, never the same one twice). Rows whose payload no
 * configured driver can read are counted, not carried: their provider is not configured here.
 */
export async function carryOverNextRange(deps: Pick<FactCarryOverDeps, 'db' | 'providers' | 'idsPerBatch'>): Promise<CarriedRange> {
  return deps.db.transaction(async (transaction) => {
    const tx = drizzleExecutor(transaction);
    const progress = await lockCarryOverProgress(tx);
    if (!progress || progress.carriedThroughInboxId >= progress.targetInboxId) {
      return { finished: true, carriedThrough: progress?.carriedThroughInboxId ?? 0, target: progress?.targetInboxId ?? 0, facts: 0, unreadable: 0 };
    }
    const through = Math.min(progress.carriedThroughInboxId + (deps.idsPerBatch ?? DEFAULT_IDS_PER_BATCH), progress.targetInboxId);
    const facts: FactToKeep[] = [];
    let unreadable = 0;
    for (const row of await selectRowsToCarry(tx, progress.carriedThroughInboxId, through)) {
      const kept = factToKeep(row, deps.providers.get(row.provider)?.driver);
      if (kept === 'unreadable') unreadable += 1;
      else if (kept) facts.push(kept);
    }
    const inserted = await insertFactsIfAbsent(tx, facts);
    await recordCarriedThrough(tx, through);
    return { finished: through >= progress.targetInboxId, carriedThrough: through, target: progress.targetInboxId, facts: inserted, unreadable };
  });
}

/**
 * Runs the carry-over in the background of a worker process until it is finished, one range per
 * transaction, so ingest and processing go on meanwhile. A failed range is logged and tried again
 * after a pause; stop() ends the loop between ranges (the progress is committed, the next start
 * goes on from it). Every worker instance runs one; they share the work through the progress row.
 */
export class FactCarryOver {
  readonly #deps: FactCarryOverDeps;
  #running: Promise<void> | undefined;
  readonly #stop = new AbortController();

  constructor(deps: FactCarryOverDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async #run(): Promise<void> {
    const logger = this.#deps.logger.child({ component: 'fact-carry-over' });
    let facts = 0;
    let unreadable = 0;
    while (!this.#stop.signal.aborted) {
      try {
        const range = await carryOverNextRange(this.#deps);
        facts += range.facts;
        unreadable += range.unreadable;
        if (range.finished) {
          if (facts > 0 || unreadable > 0)
            logger.info({ facts, unreadable, carriedThrough: range.carriedThrough }, 'facts recorded before payment_facts carried over: done');
          return;
        }
        if (range.facts > 0) logger.debug({ carriedThrough: range.carriedThrough, target: range.target, facts }, 'facts carried over so far');
      } catch (error) {
        logger.error({ err: error }, `carrying facts over failed; trying again in ${RETRY_DELAY_MS / 1000} s`);
        await delay(RETRY_DELAY_MS, undefined, { signal: this.#stop.signal }).catch(() => undefined);
      }
    }
  }
}
