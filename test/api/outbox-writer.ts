import type postgres from 'postgres';
import type { Database, Transaction } from '../../src/db/client.ts';
import { type PaymentChange, insertPaymentEvents } from '../../src/domain/payments/sql/payment-events.ts';
import type { PaymentStatus } from '../../src/domain/payments/payment-fact.ts';
import { sql } from 'drizzle-orm';

/**
 * Writes outbox rows the way the payments handler does (insertPaymentEvents, under the payment
 * rows' locks, inside a transaction the test controls), so a test can hold a transaction open
 * between its write and its COMMIT, or roll it back.
 */
export interface TestPayment {
  id: number;
  chargeId: string;
}

export async function createPayments(sqlClient: postgres.Sql, prefix: string, count: number): Promise<TestPayment[]> {
  const rows = await sqlClient`
    insert into payments (provider, gateway_charge_id, status, amount, currency)
    select 'stripe', ${prefix} || '_' || n, 'pending', 1000, 'BRL' from generate_series(1, ${count}::int) as n
    returning id, gateway_charge_id`;
  return rows.map((r) => ({ id: Number(r.id), chargeId: r.gateway_charge_id })).sort((a, b) => a.id - b.id);
}

let causeCounter = 0;

/** Locks the payments (in id order, as the handler does) and writes one status change for each. */
export async function writeChanges(tx: Transaction, targets: readonly TestPayment[], status: PaymentStatus = 'paid'): Promise<void> {
  const sorted = [...targets].sort((a, b) => a.id - b.id);
  const ids = `{${sorted.map((p) => p.id).join(',')}}`;
  const locked = await tx.execute<{ id: string; event_sequence: number }>(
    sql`select id, event_sequence from payments where id = any(${ids}::bigint[]) order by id for update`,
  );
  const lastSequence = new Map(locked.map((row) => [Number(row.id), row.event_sequence]));
  const changes: PaymentChange[] = sorted.map((p) => {
    causeCounter += 1;
    return {
      paymentId: p.id,
      sequence: lastSequence.get(p.id)! + 1,
      previousSequence: lastSequence.get(p.id)!,
      provider: 'stripe',
      chargeId: p.chargeId,
      account: null,
      previousStatus: 'pending',
      state: {
        status,
        amount: 1000,
        amountRefunded: 0,
        currency: 'BRL',
        lastGatewayEventAt: new Date(),
        inquiryOpen: false,
        statusBeforeDispute: null,
        split: null,
      },
      occurredAt: new Date(),
      cause: { inboxId: causeCounter, eventId: `evt_feed_${causeCounter}`, eventType: 'charge.succeeded' },
    };
  });
  await insertPaymentEvents(tx, changes);
  // The handler moves event_sequence on in its one update of the rows (updatePaymentStates).
  await tx.execute(sql`update payments set event_sequence = event_sequence + 1 where id = any(${ids}::bigint[])`);
}

export interface Gate {
  wait: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * A transaction that writes, then stays open until its gate opens: the long-running writer whose
 * position (bigserial, taken at INSERT) is below rows that commit before it. Resolves when `written`
 * once its rows exist (uncommitted); `done` settles after COMMIT.
 */
export function heldWrite(db: Database, targets: readonly TestPayment[], release: Gate): { written: Promise<void>; done: Promise<void> } {
  const written = gate();
  const done = db.transaction(async (tx) => {
    await writeChanges(tx, targets);
    written.open();
    await release.wait;
  });
  return { written: written.wait, done };
}

class Rollback extends Error {}

/** A writer transaction that inserts and then rolls back: its positions are a gap forever. */
export async function abortedWrite(db: Database, targets: readonly TestPayment[]): Promise<void> {
  await db
    .transaction(async (tx) => {
      await writeChanges(tx, targets);
      throw new Rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
}
