import { z } from 'zod';
import { parseDriverOptions } from '../shared/driver-options.ts';
import { fieldMappingShape, parseMappedEvent, requiringTypeSource } from '../shared/mapped-event.ts';
import { tokenVerification } from '../shared/token-verification.ts';
import type { DriverDefinition, ProviderDriver, ProviderSettings } from '../shared/webhook-driver.ts';

/**
 * The generic `token` driver: a fixed token in a header (../shared/token-verification.ts), the
 * field paths from INBOX_CONFIG. Dedupe key: the id at idHeader/idPath, else the derived key.
 */

const optionsSchema = requiringTypeSource(
  z.strictObject({
    header: z
      .string()
      .min(1)
      .transform((h) => h.toLowerCase()),
    ...fieldMappingShape,
  }),
);

export function createTokenDriver(settings: ProviderSettings): ProviderDriver {
  const options = parseDriverOptions(optionsSchema, settings.options);
  return {
    name: 'token',
    ...tokenVerification(options.header, settings.secrets),
    parse: (request, now) => parseMappedEvent(request, now, options),
    toPaymentFact: () => null,
  };
}

// Unknown gateway, unknown resend window: the same conservative 14 days as the generic hmac driver.
export const tokenDriver: DriverDefinition = { create: createTokenDriver, requiresSecret: true, resendWindowDays: 14 };
