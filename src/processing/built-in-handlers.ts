import { createAccountAccessHandler } from './account-access-handler.ts';
import type { EventHandler } from './handlers.ts';
import { type PaymentsHandlerDeps, createPaymentsHandler } from './payments-handler.ts';

// The registrations: a new handler is one file and one line here.
export function createBuiltInHandlers(deps: PaymentsHandlerDeps): EventHandler[] {
  return [createPaymentsHandler(deps), createAccountAccessHandler()];
}
