import type { GatewayModule } from '../shared/gateway-module.ts';
import { hmacDriver } from './webhook-driver.ts';

/** Any sender that signs the body with HMAC in one header: the scheme and field paths come from INBOX_CONFIG. */
export const hmacGateway: GatewayModule = { name: 'hmac', driver: hmacDriver };
