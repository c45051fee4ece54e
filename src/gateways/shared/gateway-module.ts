import type { GatewayEventList } from './event-list.ts';
import type { GatewayApi } from './gateway-api.ts';
import type { GatewayLedger } from './ledger.ts';
import type { DriverDefinition } from './webhook-driver.ts';

/**
 * Everything the inbox knows about one gateway, exported by its folder (`src/gateways/<name>/`)
 * and listed once in ../registry.ts. Only the webhook driver is required: a generic scheme (hmac,
 * token, Standard Webhooks) has no API to re-read a charge from and nothing to backfill.
 */
export interface GatewayModule {
  /** The driver's name: `driver` in INBOX_CONFIG, and the provider `WEBHOOK_SECRET_<NAME>` enables. */
  readonly name: string;
  /** Verifies and parses its webhooks (pure; ./webhook-driver.ts says the interface). */
  readonly driver: DriverDefinition;
  /** Its API, when a charge can be re-read from it (refetch). Its `requiredSettings` are the `api` keys INBOX_CONFIG takes for it. */
  readonly api?: GatewayApi;
  /** Its list of past events, when `inboxctl backfill` can read one. */
  readonly eventList?: GatewayEventList;
  /** Its settlement ledger, when `inboxctl reconcile` can read one (./ledger.ts). */
  readonly ledger?: GatewayLedger;
  /**
   * True when its webhooks are only notices (ids, hardly any state): every kind is then re-read
   * from its API by default, and a provider without an API key is a configuration problem.
   */
  readonly thinNotifications?: boolean;
}
