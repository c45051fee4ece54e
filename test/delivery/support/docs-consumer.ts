/**
 * The consumer of docs/consuming.md ("A consumer in TypeScript"), its `apply` line for line, so
 * the tests run what the docs tell the application to do: dedupe on the id, apply each payment's
 * events by sequence, and take an event whose `follows_sequence` the application has reached even
 * when the events in between were never sent to it (a skip, a filter, a later start).
 */
interface PaymentEvent {
  id: string;
  sequence: number;
  follows_sequence?: number;
  payment: { provider: string; charge_id: string };
}

export interface DocsConsumer {
  apply(event: PaymentEvent): 'applied' | 'duplicate' | 'early';
  /** The last sequence applied per `<provider>:<charge id>`. */
  readonly applied: ReadonlyMap<string, number>;
}

export function createDocsConsumer(): DocsConsumer {
  const applied = new Map<string, number>();
  const seen = new Set<string>();
  return {
    applied,
    apply(event) {
      if (seen.has(event.id)) return 'duplicate';
      const key = `${event.payment.provider}:${event.payment.charge_id}`;
      const last = applied.get(key) ?? 0;
      if (event.sequence <= last) return 'duplicate';
      // What the inbox sent this destination just before: sequence − 1 unless some were not sent to it.
      const follows = event.follows_sequence ?? event.sequence - 1;
      if (last < follows) return 'early';
      applied.set(key, event.sequence);
      seen.add(event.id);
      return 'applied';
    },
  };
}
