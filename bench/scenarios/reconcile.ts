import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Database } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import * as schema from '../../src/db/schema.ts';
import { stripeApi } from '../../src/gateways/stripe/api.ts';
import { stripeLedger } from '../../src/gateways/stripe/ledger.ts';
import { type RunResult, reconcile } from '../../src/reconciliation/reconcile.ts';
import { DEFAULT_BREAKER, DEFAULT_RATE_PER_SECOND, DEFAULT_TIMEOUT_MS } from '../../src/refetch/config-keys.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import { clusterCpuMs } from '../support/cpu.ts';

export interface ReconcileRun {
  payments: number;
  entries: number;
  /** The first run reads every entry into an empty ledger; the second reads them again (upserts, nothing new). */
  runs: Array<{ wallSeconds: number; gatewayCalls: number; pages: number; entriesNew: number; findings: number; postgresCpuMs: number | null }>;
  /** Discrepancies seeded into the month, and what the first run found. */
  seeded: Record<string, number>;
  found: Record<string, number>;
}

const DAY_MS = 86_400_000;
const API_KEY = 'sk_test_bench_reconcile';
/** Stripe's own balance_transaction example (stripe/openapi fixtures3.json), the shape each listed entry takes. */
const FIXTURE = (
  JSON.parse(readFileSync(new URL('../../test/support/stripe-openapi-fixtures.json', import.meta.url), 'utf8')) as Record<string, Record<string, unknown>>
).balance_transaction!;

interface Entry {
  id: string;
  type: string;
  amount: number;
  fee: number;
  created: number;
  source: { object: string; id: string; charge?: string; payment_intent: string | null };
}

/**
 * A month of card payments: 10,000 charges in one currency, 3 % of them partly refunded; seeded
 * with ten credits the inbox has no payment for (missed webhooks) and ten payments never credited.
 */
function monthOf(payments: number, now: number) {
  const entries: Entry[] = [];
  const rows: Array<{ key: string; status: string; amount: number; refunded: number; created: Date }> = [];
  for (let i = 0; i < payments; i++) {
    const created = Math.floor((now - 30 * DAY_MS + (i / payments) * 27 * DAY_MS) / 1000);
    const amount = 1000 + (i % 9000);
    const refunded = i % 33 === 0 ? Math.floor(amount / 2) : 0;
    const key = `pi_bench_${i}`;
    const missingCredit = i % 1000 === 7;
    if (!missingCredit)
      entries.push({
        id: `txn_bench_${i}`,
        type: 'charge',
        amount,
        fee: Math.round(amount * 0.029) + 30,
        created,
        source: { object: 'charge', id: `ch_bench_${i}`, payment_intent: key },
      });
    if (refunded > 0)
      entries.push({
        id: `txn_bench_${i}_re`,
        type: 'refund',
        amount: -refunded,
        fee: 0,
        created: created + 3600,
        source: { object: 'refund', id: `re_bench_${i}`, charge: `ch_bench_${i}`, payment_intent: key },
      });
    rows.push({ key, status: refunded > 0 ? 'partially_refunded' : 'paid', amount, refunded, created: new Date(created * 1000) });
  }
  for (let i = 0; i < 10; i++)
    entries.push({
      id: `txn_ghost_${i}`,
      type: 'charge',
      amount: 4200,
      fee: 152,
      created: Math.floor((now - 10 * DAY_MS) / 1000) + i,
      source: { object: 'charge', id: `ch_ghost_${i}`, payment_intent: `pi_ghost_${i}` },
    });
  return {
    entries: entries.sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1)),
    rows,
    seeded: { credit_without_payment: 10, missing_credit: Math.ceil((payments - 7) / 1000) },
  };
}

/** Stripe's GET /v1/balance_transactions over the month: newest first, 100 a page, sources expanded. */
async function serveLedger(entries: Entry[]): Promise<{ server: Server; baseUrl: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((request, response) => {
    calls += 1;
    const query = new URL(request.url ?? '/', 'http://x').searchParams;
    const after = query.get('starting_after');
    const gte = Number(query.get('created[gte]'));
    const start = after === null ? 0 : entries.findIndex((e) => e.id === after) + 1;
    const page = entries
      .slice(start)
      .filter((e) => e.created >= gte)
      .slice(0, Number(query.get('limit') ?? 10));
    const data = page.map((e) => ({
      ...FIXTURE,
      id: e.id,
      type: e.type,
      reporting_category: e.type,
      amount: e.amount,
      fee: e.fee,
      net: e.amount - e.fee,
      created: e.created,
      available_on: e.created + 2 * 86_400,
      source: e.source,
    }));
    const hasMore = start + page.length < entries.length && entries[start + page.length]!.created >= gte;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ object: 'list', url: '/v1/balance_transactions', has_more: hasMore, data }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls };
}

function describeRun(result: RunResult, wallSeconds: number, gatewayCalls: number, postgresCpuMs: number | null): ReconcileRun['runs'][number] {
  return { wallSeconds, gatewayCalls, pages: result.run.pages, entriesNew: result.run.entriesNew, findings: result.findings.length, postgresCpuMs };
}

/**
 * `npm run bench -- reconcile`: a month of 10,000 Stripe payments reconciled against a local
 * stand-in for /v1/balance_transactions, at the product's default rate limit (10 calls/s): wall
 * time, gateway calls and the PostgreSQL cluster's CPU, for a first run and for a second one
 * over the same month.
 */
export async function runReconcile(options: {
  databaseUrl: string;
  payments: number;
  postmasterPid: number | undefined;
  log: (line: string) => void;
}): Promise<ReconcileRun> {
  await applyMigrations(options.databaseUrl);
  const now = Date.now();
  const month = monthOf(options.payments, now);
  const client = postgres(options.databaseUrl, { max: 4, onnotice: () => {} });
  const db = drizzle(client, { schema }) as unknown as Database;
  const rows = month.rows.map((r) => ({
    provider: 'stripe',
    gateway_charge_id: r.key,
    status: r.status,
    amount: r.amount,
    amount_refunded: r.refunded,
    currency: 'USD',
    created_at: r.created.toISOString(),
    updated_at: r.created.toISOString(),
  }));
  // A statement carries at most 65,534 parameters: 8 columns × 5,000 rows.
  for (let start = 0; start < rows.length; start += 5000) await client`insert into payments ${client(rows.slice(start, start + 5000))}`;
  await client`analyze payments`;
  const ledger = await serveLedger(month.entries);
  const target = {
    provider: 'stripe',
    gateway: stripeApi,
    baseUrl: ledger.baseUrl,
    key: API_KEY,
    settings: {},
    ratePerSecond: DEFAULT_RATE_PER_SECOND,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    breaker: DEFAULT_BREAKER,
  };
  const refetcher = createRefetcher({ targets: [target], clock: () => new Date() });
  const deps = {
    db,
    provider: 'stripe',
    account: null,
    ledger: stripeLedger,
    get: (path: string) => refetcher.get('stripe', path),
    clock: () => new Date(),
    sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
    notice: options.log,
    settlementDays: 2,
  };
  const runs: ReconcileRun['runs'] = [];
  let found: Record<string, number> = {};
  try {
    for (const label of ['first run (empty ledger)', 'second run (same month again)']) {
      const callsBefore = ledger.calls();
      const cpuBefore = options.postmasterPid ? clusterCpuMs(options.postmasterPid) : undefined;
      const started = performance.now();
      const [result] = await reconcile(deps, { kind: 'window', since: new Date(now - 31 * DAY_MS), until: new Date() });
      const wallSeconds = (performance.now() - started) / 1000;
      const cpu = cpuBefore === undefined ? null : Math.round(clusterCpuMs(options.postmasterPid!) - cpuBefore);
      const run = describeRun(result!, wallSeconds, ledger.calls() - callsBefore, cpu);
      runs.push(run);
      if (runs.length === 1)
        found = Object.fromEntries(
          [...new Set(result!.findings.map((f) => f.kind))].map((kind) => [kind, result!.findings.filter((f) => f.kind === kind).length]),
        );
      options.log(
        `  reconcile ${label}: ${options.payments} payments, ${month.entries.length} entries in ${wallSeconds.toFixed(1)} s, ${run.gatewayCalls} gateway calls (${run.pages} pages at ${DEFAULT_RATE_PER_SECOND}/s), ${run.entriesNew} new, ${run.findings} findings; PostgreSQL CPU ${cpu ?? '?'} ms`,
      );
    }
  } finally {
    await new Promise((resolve) => ledger.server.close(resolve));
    await client.end();
  }
  options.log(`    seeded ${JSON.stringify(month.seeded)}, found ${JSON.stringify(found)}`);
  return { payments: options.payments, entries: month.entries.length, runs, seeded: month.seeded, found };
}
