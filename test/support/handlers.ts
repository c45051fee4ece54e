import { createBuiltInHandlers } from '../../src/processing/built-in-handlers.ts';
import type { EventHandler } from '../../src/processing/handlers.ts';
import { createPaymentsHandler } from '../../src/processing/payments-handler.ts';

/** Without a refetcher: every payment kind ordered by occurred_at (tests that need no gateway). */
export const paymentsHandler: EventHandler = createPaymentsHandler({});

/** The built-in handlers without a gateway refetcher. */
export const builtInHandlers: readonly EventHandler[] = createBuiltInHandlers({});

/**
 * The payments handler with a bug (a handler incident): it throws for events whose id starts with
 * `prefix` while `deployed()` is true, and works once the "fix" is deployed.
 */
export function paymentsHandlerWithBug(prefix: string, deployed: () => boolean): EventHandler {
  return {
    ...paymentsHandler,
    async apply(tx, events) {
      if (deployed() && events.some(({ event }) => event.stored.eventId.startsWith(prefix)))
        throw new TypeError("Cannot read properties of undefined (reading 'amount')");
      return paymentsHandler.apply(tx, events);
    },
  };
}
