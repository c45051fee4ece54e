import { z } from 'zod';
import { type PaymentKind, paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import { gatewayApis } from '../gateways/registry.ts';

const strategy = z.enum(['occurred_at', 'refetch']);

const paymentKinds: readonly PaymentKind[] = paymentStatuses.map(paymentKind);

/** The `api` keys a gateway's API needs besides the key (Zoop: `marketplaceId`), as its folder declares them. */
const gatewaySettingKeys: Record<string, z.ZodOptional<z.ZodString>> = Object.fromEntries(
  Object.values(gatewayApis).flatMap((api) => api.requiredSettings.map((setting) => [setting, z.string().min(1).optional()])),
);

/**
 * The refetch strategy's per-provider keys of INBOX_CONFIG (stripped before the driver sees the
 * rest); what they mean is ./settings.ts's to resolve.
 */
export const refetchFileKeys = {
  api: z
    .strictObject({
      gateway: z.string().min(1).optional(),
      baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
      key: z.string().min(1).optional(),
      ...gatewaySettingKeys,
      timeoutMs: z.number().int().min(100).max(60_000).optional(),
      breaker: z
        .strictObject({
          consecutiveFailures: z.number().int().min(1).max(1000).optional(),
          halfOpenAfterMs: z.number().int().min(100).max(3_600_000).optional(),
        })
        .optional(),
    })
    .optional(),
  ordering: z
    .strictObject(Object.fromEntries(['default', ...paymentKinds].map((key) => [key, strategy.optional()])) as Record<'default' | PaymentKind, z.ZodOptional<typeof strategy>>)
    .optional(),
  ratePerSecond: z.number().positive().max(10_000).optional(),
};

export interface DeclaredRefetch {
  /** Its known keys, and each gateway API's own settings by name (gatewaySettingKeys; Zoop: `marketplaceId`). */
  api?: z.infer<typeof refetchFileKeys.api> & { readonly [setting: string]: unknown };
  ordering?: z.infer<typeof refetchFileKeys.ordering>;
  ratePerSecond?: number;
}

const API_KEY_PREFIX = 'GATEWAY_API_KEY_';

/** `GATEWAY_API_KEY_STRIPE_BR` holds the API key of the provider `stripe-br`. */
export function apiKeyEnvName(provider: string): string {
  return API_KEY_PREFIX + provider.toUpperCase().replaceAll('-', '_');
}
