import { asaasGateway } from './asaas.ts';
import { mercadopagoGateway } from './mercadopago.ts';
import { pagarmeGateway } from './pagarme.ts';
import { stripeGateway } from './stripe.ts';
import type { GatewayApi } from './types.ts';
import { zoopGateway } from './zoop.ts';

/**
 * The gateway APIs a charge can be re-read from, by name. A provider uses the one named like its
 * webhook driver (`api.gateway` in INBOX_CONFIG names another); drivers without one (github,
 * shopify, hmac, …) can only order by occurred_at.
 */
export const gatewayApis: Readonly<Record<string, GatewayApi>> = {
  stripe: stripeGateway,
  pagarme: pagarmeGateway,
  asaas: asaasGateway,
  zoop: zoopGateway,
  mercadopago: mercadopagoGateway,
};
