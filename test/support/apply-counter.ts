import type { EventHandler } from '../../src/processing/handlers.ts';
import { paymentsHandler } from './handlers.ts';

/** Counts what handlers are given to apply, across every handler it made (several services in one process). */
export interface ApplyCounter {
  /** `inner` (default: the payments handler), counting each apply under `label` (say, the instance). */
  handler(label?: string, inner?: EventHandler): EventHandler;
  /** Events handed to apply, whatever came of it: by every handler of this counter, or by one label. */
  attempted(label?: string): number;
  /** Applies of one event that returned (did not throw). */
  appliedOf(eventId: string): number;
  /** The most applies of one resource (a charge) that ran at the same moment. */
  maxInFlight(resourceId: string): number;
  /** Attempts by label, for a diagnostic line. */
  byLabel(): Record<string, number>;
}

export function createApplyCounter(): ApplyCounter {
  const inFlight = new Map<string, number>();
  const mostInFlight = new Map<string, number>();
  const attemptsByLabel = new Map<string, number>();
  const applied = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, by: number) => map.set(key, (map.get(key) ?? 0) + by);
  return {
    handler(label = 'all', inner = paymentsHandler) {
      return {
        ...inner,
        async apply(tx, events) {
          const resources = events.map(({ event }) => event.stored.resourceId ?? '');
          for (const resource of resources) {
            add(inFlight, resource, 1);
            mostInFlight.set(resource, Math.max(mostInFlight.get(resource) ?? 0, inFlight.get(resource)!));
          }
          add(attemptsByLabel, label, events.length);
          try {
            const outcomes = await inner.apply(tx, events);
            for (const { event } of events) add(applied, event.stored.eventId, 1);
            return outcomes;
          } finally {
            for (const resource of resources) add(inFlight, resource, -1);
          }
        },
      };
    },
    attempted: (label) => (label === undefined ? [...attemptsByLabel.values()].reduce((a, b) => a + b, 0) : (attemptsByLabel.get(label) ?? 0)),
    appliedOf: (eventId) => applied.get(eventId) ?? 0,
    maxInFlight: (resourceId) => mostInFlight.get(resourceId) ?? 0,
    byLabel: () => Object.fromEntries(attemptsByLabel),
  };
}
