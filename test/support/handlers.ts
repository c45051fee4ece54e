import { createBuiltInHandlers } from '../../src/processing/built-in-handlers.ts';
import type { EventHandler } from '../../src/processing/handlers.ts';
import { createPaymentsHandler } from '../../src/processing/payments-handler.ts';

/** Without a refetcher: every payment kind ordered by occurred_at (tests that need no gateway). */
export const paymentsHandler: EventHandler = createPaymentsHandler({});

/** The built-in handlers without a gateway refetcher. */
export const builtInHandlers: readonly EventHandler[] = createBuiltInHandlers({});
