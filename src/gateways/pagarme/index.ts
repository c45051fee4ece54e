import type { GatewayModule } from '../shared/gateway-module.ts';
import { pagarmeApi } from './api.ts';
import { pagarmeLedger } from './ledger.ts';
import { pagarmeDriver } from './webhook-driver.ts';

/** Pagar.me v5: webhooks signed with its published keys (JWKS), optional Basic auth; charges re-read from the v5 API, payables read for reconcile. */
export const pagarmeGateway: GatewayModule = { name: 'pagarme', driver: pagarmeDriver, api: pagarmeApi, ledger: pagarmeLedger };
