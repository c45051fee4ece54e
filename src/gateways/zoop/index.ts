import type { GatewayModule } from '../shared/gateway-module.ts';
import { zoopApi } from './api.ts';
import { zoopDriver } from './webhook-driver.ts';

/** Zoop: thin notifications (a token header, or none), every kind re-read from its per-marketplace API (`api.marketplaceId`). */
export const zoopGateway: GatewayModule = { name: 'zoop', driver: zoopDriver, api: zoopApi, thinNotifications: true };
