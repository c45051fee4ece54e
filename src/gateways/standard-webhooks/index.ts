import type { GatewayModule } from '../shared/gateway-module.ts';
import { standardWebhooksDriver } from './webhook-driver.ts';

/** Any sender of Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). */
export const standardWebhooksGateway: GatewayModule = { name: 'standard-webhooks', driver: standardWebhooksDriver };
