import type { SignedMaterial } from './proof.ts';
import type { WebhookRequest } from './webhook-driver.ts';

/** The signature headers a check read, as received (absent ones left out). */
export function signedMaterial(request: WebhookRequest, headers: readonly string[], query: readonly string[] = []): SignedMaterial {
  const material: SignedMaterial = { headers: {} };
  for (const name of headers) {
    const value = request.header(name);
    if (value !== undefined) material.headers[name] = value;
  }
  for (const name of query) {
    const value = request.query.get(name);
    if (value !== null) (material.query ??= {})[name] = value;
  }
  return material;
}

/** A stored request as a driver reads it again: the exact bytes and the signature headers kept. */
export function storedRequest(rawBody: Buffer, signed: SignedMaterial): WebhookRequest {
  const headers = new Map(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { rawBody, header: (name) => headers.get(name.toLowerCase()), query: new URLSearchParams(signed.query ?? {}) };
}
