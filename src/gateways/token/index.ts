import type { GatewayModule } from '../shared/gateway-module.ts';
import { tokenDriver } from './webhook-driver.ts';

/** Any sender that puts a fixed token in a header: the header and field paths come from INBOX_CONFIG. */
export const tokenGateway: GatewayModule = { name: 'token', driver: tokenDriver };
