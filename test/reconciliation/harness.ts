import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type postgres from 'postgres';
import type { TestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { setup } from '../support/setup.ts';
import { runInboxctl } from '../cli/run-inboxctl.ts';

export const DAY = 86_400_000;
export const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

export interface ReconcileFixture {
  gateway: FakeGateway;
  env: Record<string, string>;
  reconcile(...args: string[]): ReturnType<typeof runInboxctl>;
}

/** A fake gateway and an INBOX_CONFIG pointing the provider's API at it; inboxctl runs against the test database. */
export function useReconcileFixture(
  database: TestDatabase,
  options: { provider: string; env: Record<string, string>; providerConfig?: Record<string, unknown> },
): ReconcileFixture {
  const fixture = {} as ReconcileFixture;
  let configDir: string | undefined;
  setup(async () => {
    fixture.gateway = await startFakeGateway();
    configDir = await mkdtemp(path.join(tmpdir(), `inboxctl-reconcile-${options.provider}-`));
    const file = path.join(configDir, 'inbox.json');
    // No retries past one failure, and a breaker that opens at once: "down half-way" stops the run at the page it hit.
    const api = { baseUrl: fixture.gateway.baseUrl, timeoutMs: 2000, breaker: { consecutiveFailures: 1, halfOpenAfterMs: 100 } };
    await writeFile(
      file,
      JSON.stringify({ providers: { [options.provider]: { driver: options.provider, ordering: { default: 'occurred_at' }, ...options.providerConfig, api } } }),
    );
    fixture.env = { DATABASE_URL: database.url, ...options.env, INBOX_CONFIG: file };
    database.onTeardown(async () => {
      await fixture.gateway.close();
      if (configDir) await rm(configDir, { recursive: true, force: true });
    });
  });
  fixture.reconcile = (...args) => runInboxctl(['reconcile', ...args], fixture.env);
  return fixture;
}

export interface PaymentRow {
  key: string;
  status: string;
  amount: number;
  refunded?: number;
  currency?: string;
  /** The gateway account it is money of (a Connect account); absent: the provider's own. */
  account?: string;
  /** When the inbox first saw it, and last saw it change. */
  created: Date;
  updated?: Date;
}

/** A payment as the inbox holds it: only its gateway key and money, the columns reconciliation reads. */
export async function insertPayments(sql: postgres.Sql, provider: string, rows: readonly PaymentRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((row) => ({
    provider,
    gateway_charge_id: row.key,
    status: row.status,
    amount: row.amount,
    amount_refunded: row.refunded ?? 0,
    currency: row.currency ?? 'USD',
    account: row.account ?? null,
    created_at: row.created,
    updated_at: row.updated ?? row.created,
  }));
  await sql`insert into payments ${sql(values)}`;
}

export interface JsonRun {
  run: { id: number; status: string; pages: number; entriesRead: number; entriesNew: number; unreadable: number; scope: string };
  resumed: boolean;
  findings: Array<{ kind: string; subject: string; evidence: Record<string, unknown> }>;
  newFindings: number;
  resolved: number;
  rateLimitedWaits: number;
  gatewayCalls: number;
}

export const kindsAndSubjects = (runs: readonly JsonRun[]) => runs.flatMap((r) => r.findings.map((f) => `${f.kind} ${f.subject}`)).sort();
