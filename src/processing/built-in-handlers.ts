import type { EventHandler } from './handlers.ts';
import { type PaymentsHandlerDeps, createPaymentsHandler } from './payments-handler.ts';

export type BuiltInHandlerDeps = PaymentsHandlerDeps;

// The registrations: a new handler is one file and one line here.
export function createBuiltInHandlers(deps: BuiltInHandlerDeps): EventHandler[] {
  return [createPaymentsHandler(deps)];
}
