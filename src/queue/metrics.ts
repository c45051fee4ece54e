import { Gauge, type Registry } from 'prom-client';

/** pg-boss's own counts per queue, set by the gauge refresher (src/operations/gauge-refresher.ts). */
export interface QueueGauges {
  queueJobs: Gauge<'queue' | 'state'>;
}

export function declareQueueGauges(registers: Registry[]): QueueGauges {
  return {
    queueJobs: new Gauge({
      name: 'pgboss_queue_jobs',
      help: "pg-boss jobs per queue and state, from pg-boss's own counts (refreshed by its monitor about once a minute).",
      labelNames: ['queue', 'state'],
      registers,
    }),
  };
}
