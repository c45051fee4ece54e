import type { ProviderDriver, ProviderSettings, WebhookRequest } from '../../src/gateways/shared/webhook-driver.ts';
import type { DriverDefinition } from '../../src/gateways/shared/webhook-driver.ts';

/** A delivery as the route hands it to a driver: exact bytes, case-insensitive headers, the query. */
export function webhookRequest(body: string | Buffer, headers: Record<string, string> = {}, query = ''): WebhookRequest {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
    header: (name) => lower.get(name.toLowerCase()),
    query: new URLSearchParams(query),
  };
}

export function createDriver(definition: DriverDefinition, settings: Partial<ProviderSettings> = {}): ProviderDriver {
  return definition.create({ name: 'test', secrets: [], signatureToleranceSeconds: 300, options: {}, ...settings });
}

/** Runs verify (sync or async) and returns the SignatureError code it threw, or 'ok'. */
export async function verifyOutcome(driver: ProviderDriver, request: WebhookRequest, now = new Date()): Promise<string> {
  try {
    await driver.verify(request, now);
    return 'ok';
  } catch (error) {
    if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
    throw error;
  }
}

export function errorCode(action: () => unknown): string {
  try {
    action();
    return 'ok';
  } catch (error) {
    if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
    throw error;
  }
}
