import type { GatewayModule } from '../shared/gateway-module.ts';
import { shopifyDriver } from './webhook-driver.ts';

/** Shopify: X-Shopify-Hmac-Sha256 over the body (the shared HMAC verifier). */
export const shopifyGateway: GatewayModule = { name: 'shopify', driver: shopifyDriver };
