import type { GatewayModule } from '../shared/gateway-module.ts';
import { pagarmeLegacyDriver } from './webhook-driver.ts';

/** Pagar.me v4 postbacks (form-encoded, HMAC-SHA1 with the account's API key); no API of their own (`api.gateway: "pagarme"` borrows v5's). */
export const pagarmeLegacyGateway: GatewayModule = { name: 'pagarme-legacy', driver: pagarmeLegacyDriver };
