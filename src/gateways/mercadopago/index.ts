import type { GatewayModule } from '../shared/gateway-module.ts';
import { mercadopagoApi } from './api.ts';
import { mercadoPagoPaymentList } from './event-list.ts';
import { mercadoPagoDriver } from './webhook-driver.ts';

/** Mercado Pago: thin notifications signed with x-signature, every kind re-read from its API; payments listed for backfill. */
export const mercadoPagoGateway: GatewayModule = {
  name: 'mercadopago',
  driver: mercadoPagoDriver,
  api: mercadopagoApi,
  eventList: mercadoPagoPaymentList,
  thinNotifications: true,
};
