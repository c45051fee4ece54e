import { z } from 'zod';
import { parseDriverOptions } from '../shared/driver-options.ts';
import { type HmacScheme, hmacVerification } from '../shared/hmac-verification.ts';
import { fieldMappingShape, parseMappedEvent, requiringTypeSource } from '../shared/mapped-event.ts';
import type { DriverDefinition, ProviderDriver, ProviderSettings } from '../shared/webhook-driver.ts';

/**
 * The generic `hmac` driver: the scheme (../shared/hmac-verification.ts) and the field paths come
 * from INBOX_CONFIG. Dedupe key: the id at idHeader/idPath, else the derived key (derived-key.ts).
 */

const optionsSchema = requiringTypeSource(
  z.strictObject({
    header: z
      .string()
      .min(1)
      .transform((h) => h.toLowerCase()),
    algorithm: z.enum(['sha256', 'sha1']).default('sha256'),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    prefix: z.string().default(''),
    prefixRequired: z.boolean().default(true),
    timestampHeader: z.string().min(1).optional(),
    timestampSeparator: z.string().default('.'),
    ...fieldMappingShape,
  }),
);

export function createHmacDriver(settings: ProviderSettings): ProviderDriver {
  const options = parseDriverOptions(optionsSchema, settings.options);
  const scheme: HmacScheme = {
    header: options.header,
    algorithm: options.algorithm,
    encoding: options.encoding,
    prefix: options.prefix,
    prefixRequired: options.prefixRequired,
    timestamp: options.timestampHeader ? { header: options.timestampHeader.toLowerCase(), separator: options.timestampSeparator } : undefined,
  };
  return {
    name: 'hmac',
    ...hmacVerification(scheme, settings),
    parse: (request, now) => parseMappedEvent(request, now, options),
    // A generic gateway's vocabulary is unknown: its events are stored and left to registered handlers.
    toPaymentFact: () => null,
  };
}

// The gateway behind a generic driver is unknown, so its resend window is too: 14 days covers the
// longest documented schedule among the gateways here (Asaas keeps paused events 14 days) and
// stays under the default 30-day retention.
export const hmacDriver: DriverDefinition = { create: createHmacDriver, requiresSecret: true, resendWindowDays: 14 };
