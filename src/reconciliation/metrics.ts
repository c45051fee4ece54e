import { Gauge, type Registry } from 'prom-client';

/** Reconciliation's gauges, set from the database by the gauge refresher (src/operations/gauge-refresher.ts). */
export interface ReconciliationGauges {
  reconciliationFindingsOpen: Gauge<'provider' | 'kind'>;
  reconciliationLastCompleteRun: Gauge<'provider'>;
  reconciliationAccountsIncomplete: Gauge<'provider'>;
}

export function declareReconciliationGauges(registers: Registry[]): ReconciliationGauges {
  return {
    reconciliationFindingsOpen: new Gauge({
      name: 'inbox_reconciliation_findings_open',
      help: 'Open reconciliation findings (payments and ledger entries that disagree), by provider and kind (from the database).',
      labelNames: ['provider', 'kind'],
      registers,
    }),
    reconciliationLastCompleteRun: new Gauge({
      name: 'inbox_reconciliation_last_complete_run_timestamp_seconds',
      help: "When the provider's last complete reconciliation run of its own ledger finished, not a connected account's (Unix time; from the database).",
      labelNames: ['provider'],
      registers,
    }),
    reconciliationAccountsIncomplete: new Gauge({
      name: 'inbox_reconciliation_accounts_incomplete',
      help: 'Accounts reconciled on their behalf whose latest run stopped part-way, by provider (from the database).',
      labelNames: ['provider'],
      registers,
    }),
  };
}
