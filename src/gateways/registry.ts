import { asaasGateway } from './asaas/index.ts';
import { githubGateway } from './github/index.ts';
import { hmacGateway } from './hmac/index.ts';
import { mercadoPagoGateway } from './mercadopago/index.ts';
import { pagarmeLegacyGateway } from './pagarme-legacy/index.ts';
import { pagarmeGateway } from './pagarme/index.ts';
import type { GatewayEventList } from './shared/event-list.ts';
import type { GatewayApi } from './shared/gateway-api.ts';
import type { GatewayLedger } from './shared/ledger.ts';
import type { GatewayModule } from './shared/gateway-module.ts';
import type { DriverDefinition } from './shared/webhook-driver.ts';
import { shopifyGateway } from './shopify/index.ts';
import { standardWebhooksGateway } from './standard-webhooks/index.ts';
import { stripeGateway } from './stripe/index.ts';
import { tokenGateway } from './token/index.ts';
import { zoopGateway } from './zoop/index.ts';

/**
 * Every built-in gateway, one line each. A new gateway = one folder (src/gateways/<name>/, its
 * index.ts exporting a GatewayModule) + one line here + its vector tests (test/gateways/<name>/).
 * `WEBHOOK_SECRET_<NAME>` enables the provider <name> with the driver of that name.
 */
const gatewayModules: readonly GatewayModule[] = [
  stripeGateway,
  standardWebhooksGateway,
  hmacGateway,
  tokenGateway,
  githubGateway,
  shopifyGateway,
  asaasGateway,
  zoopGateway,
  pagarmeGateway,
  pagarmeLegacyGateway,
  mercadoPagoGateway,
];

/** Every built-in gateway by its driver's name. */
export const builtInGateways: Readonly<Record<string, GatewayModule>> = Object.fromEntries(gatewayModules.map((gateway) => [gateway.name, gateway]));

/** Every built-in driver by name. */
export const builtInDrivers: Readonly<Record<string, DriverDefinition>> = Object.fromEntries(gatewayModules.map((gateway) => [gateway.name, gateway.driver]));

/**
 * The gateway APIs a charge can be re-read from, by name. A provider uses the one named like its
 * webhook driver (`api.gateway` in INBOX_CONFIG names another); drivers without one (github,
 * shopify, hmac, …) can only order by occurred_at.
 */
export const gatewayApis: Readonly<Record<string, GatewayApi>> = Object.fromEntries(
  gatewayModules.flatMap((gateway) => (gateway.api ? [[gateway.name, gateway.api]] : [])),
);

/**
 * The gateways that can be backfilled, by API mapping name (why the others cannot:
 * docs/operations.md#backfill-events-the-inbox-never-received).
 */
export const gatewayEventLists: Readonly<Record<string, GatewayEventList>> = Object.fromEntries(
  gatewayModules.flatMap((gateway) => (gateway.eventList ? [[gateway.name, gateway.eventList]] : [])),
);

/** The gateways whose settlement ledger `inboxctl reconcile` reads, by API mapping name. */
export const gatewayLedgers: Readonly<Record<string, GatewayLedger>> = Object.fromEntries(
  gatewayModules.flatMap((gateway) => (gateway.ledger ? [[gateway.name, gateway.ledger]] : [])),
);
