import { Gauge, type Registry } from 'prom-client';

/** Reconciliation's gauges, set from the database by the gauge refresher (src/operations/gauge-refresher.ts). */
export interface ReconciliationGauges {
  reconciliationFindingsOpen: Gauge<'provider' | 'kind'>;
  reconciliationLastCompleteRun: Gauge<'provider'>;
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
      help: 'When the last complete reconciliation run of the provider finished (Unix time; from the database).',
      labelNames: ['provider'],
      registers,
    }),
  };
}
