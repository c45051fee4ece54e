import type { z } from 'zod';
import { ConfigError } from '../../errors.ts';

/**
 * Validates a driver's options from INBOX_CONFIG with the driver's own (strict) schema, so a
 * misspelt option is reported instead of silently ignored; every problem is listed at once.
 */
export function parseDriverOptions<T extends z.ZodType>(schema: T, options: Record<string, unknown>): z.infer<T> {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `option ${issue.path.join('.') || '(options)'}: ${issue.message}`));
}
