import type { Transaction } from '../../db/client.ts';
import { encodeCheckpoint, foldStart, isAfterStart } from './checkpoint.ts';
import { type KnownFact, foldPaymentFacts } from './fold.ts';
import { type PrunableFact, deleteFacts, findFactsOfKeys } from './sql/payment-facts.ts';
import { type PaymentCheckpoint, lockPayments, writeCheckpoints } from './sql/payments.ts';
import type { PaymentRow } from './schema.ts';

export interface PruneRequest {
  provider: string;
  /** Payment keys with a fact older than `cutoff` (selectOldFacts): each is looked at with every key linked to it. */
  keys: readonly string[];
  /** A payment whose newest fact is older than this is quiet: its facts go. */
  cutoff: Date;
  /** The provider's `require` mode: a fold starts from the application's row (checkpoint.ts). */
  require: boolean;
}

export interface PruneOutcome {
  /** Payments whose facts were folded into their row's checkpoint and deleted. */
  checkpointed: number;
  /** Charges with facts but no payment (every event refused for its amounts): their facts deleted. */
  withoutPayment: number;
  /** Payments left as they are: a fact newer than the cut-off. */
  active: number;
  factsDeleted: number;
}

/** The facts grouped by payment: facts under a key and under its legacy key are one payment's. */
function groupByPayment(facts: readonly PrunableFact[]): PrunableFact[][] {
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root)!;
    return root;
  };
  for (const fact of facts) {
    if (!parent.has(fact.paymentKey)) parent.set(fact.paymentKey, fact.paymentKey);
    if (fact.legacyKey !== null) parent.set(find(fact.legacyKey), find(fact.paymentKey));
  }
  const groups = new Map<string, PrunableFact[]>();
  for (const fact of facts) groups.set(find(fact.paymentKey), [...(groups.get(find(fact.paymentKey)) ?? []), fact]);
  return [...groups.values()];
}

/** The group's payment row: the one under its current key (no fact names it as legacy), else the legacy one. */
function paymentOf(group: readonly PrunableFact[], rows: ReadonlyMap<string, PaymentRow>): PaymentRow | undefined {
  const legacy = new Set(group.flatMap((f) => (f.legacyKey === null ? [] : [f.legacyKey])));
  const keys = [...new Set(group.flatMap((f) => [f.paymentKey, ...(f.legacyKey === null ? [] : [f.legacyKey])]))];
  return (
    keys
      .filter((k) => !legacy.has(k))
      .map((k) => rows.get(k))
      .find(Boolean) ?? keys.map((k) => rows.get(k)).find(Boolean)
  );
}

/** Keys linked to `keys` through facts kept under them (a legacy key and its successor). */
async function linkedKeys(tx: Transaction, provider: string, keys: readonly string[]): Promise<string[]> {
  const all = new Set(keys);
  for (const fact of await findFactsOfKeys(tx, provider, keys)) {
    all.add(fact.paymentKey);
    if (fact.legacyKey !== null) all.add(fact.legacyKey);
  }
  return [...all];
}

/**
 * Fact retention's unit of work, in the caller's transaction: the quiet payments among `keys`
 * keep what their facts fold to as their checkpoint, and their facts are deleted. The payment rows
 * are locked before their facts are read again, as processing locks them before it folds: an
 * event processed meanwhile either committed first (its new fact makes the payment active) or
 * waits and then folds from the checkpoint.
 */
export async function checkpointQuietPayments(tx: Transaction, request: PruneRequest): Promise<PruneOutcome> {
  const { provider } = request;
  const keys = await linkedKeys(tx, provider, request.keys);
  const locked = await lockPayments(
    tx,
    keys.map((chargeId) => ({ provider, chargeId })),
  );
  const rows = new Map(locked.filter((row) => row.provider === provider).map((row) => [row.gatewayChargeId, row]));
  const outcome: PruneOutcome = { checkpointed: 0, withoutPayment: 0, active: 0, factsDeleted: 0 };
  const checkpoints: PaymentCheckpoint[] = [];
  const deleted: string[] = [];
  for (const group of groupByPayment(await findFactsOfKeys(tx, provider, keys))) {
    if (group.some((f) => f.recordedAt.getTime() >= request.cutoff.getTime())) {
      outcome.active += 1;
      continue;
    }
    const row = paymentOf(group, rows);
    if (row) {
      const start = foldStart(row, request.require);
      const facts = group.flatMap((f): KnownFact[] => (f.fact ? [{ inboxId: f.inboxId, fact: f.fact }] : [])).filter((known) => isAfterStart(start, known));
      const state = foldPaymentFacts(start, facts).state;
      if (state === null) continue;
      checkpoints.push({ id: row.id, checkpoint: encodeCheckpoint(state) });
      outcome.checkpointed += 1;
    } else outcome.withoutPayment += 1;
    deleted.push(...group.map((f) => f.eventId));
  }
  await writeCheckpoints(tx, checkpoints);
  await deleteFacts(tx, provider, deleted);
  outcome.factsDeleted = deleted.length;
  return outcome;
}
