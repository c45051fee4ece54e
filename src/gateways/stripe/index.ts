import type { GatewayModule } from '../shared/gateway-module.ts';
import { stripeApi } from './api.ts';
import { stripeEventList } from './event-list.ts';
import { stripeLedger } from './ledger.ts';
import { stripeDriver } from './webhook-driver.ts';

/** Stripe: signed events (Stripe-Signature v1), charges and payment intents re-read from its API, 30 days of events listed for backfill, balance transactions and payouts read for reconcile. */
export const stripeGateway: GatewayModule = { name: 'stripe', driver: stripeDriver, api: stripeApi, eventList: stripeEventList, ledger: stripeLedger };
