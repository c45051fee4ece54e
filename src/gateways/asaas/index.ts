import type { GatewayModule } from '../shared/gateway-module.ts';
import { asaasApi } from './api.ts';
import { asaasPaymentList } from './event-list.ts';
import { asaasLedger } from './ledger.ts';
import { asaasDriver } from './webhook-driver.ts';

/** Asaas: a static token header, payments re-read from its API and listed for backfill, its statement read for reconcile. */
export const asaasGateway: GatewayModule = { name: 'asaas', driver: asaasDriver, api: asaasApi, eventList: asaasPaymentList, ledger: asaasLedger };
