import type { DriverDefinition } from './types.ts';
import { asaasDriver } from './asaas.ts';
import { githubDriver } from './github.ts';
import { hmacDriver } from './hmac.ts';
import { mercadoPagoDriver } from './mercadopago.ts';
import { pagarmeDriver } from './pagarme.ts';
import { pagarmeLegacyDriver } from './pagarme-legacy.ts';
import { shopifyDriver } from './shopify.ts';
import { standardWebhooksDriver } from './standard-webhooks.ts';
import { stripeDriver } from './stripe.ts';
import { tokenDriver } from './token.ts';
import { zoopDriver } from './zoop.ts';

/**
 * Every built-in driver by name. A new gateway = one file in this folder + one line here + its
 * vector tests. `WEBHOOK_SECRET_<NAME>` enables the provider <name> with the driver of that name.
 */
export const builtInDrivers: Readonly<Record<string, DriverDefinition>> = {
  stripe: stripeDriver,
  'standard-webhooks': standardWebhooksDriver,
  hmac: hmacDriver,
  token: tokenDriver,
  github: githubDriver,
  shopify: shopifyDriver,
  asaas: asaasDriver,
  zoop: zoopDriver,
  pagarme: pagarmeDriver,
  'pagarme-legacy': pagarmeLegacyDriver,
  mercadopago: mercadoPagoDriver,
};
