import { SignatureError } from '../../errors.ts';
import { type WebhookRequestProof, type Reverification, type StoredWebhookRequest, secretMatch } from './proof.ts';
import { storedRequest } from './signed-material.ts';
import type { WebhookRequest } from './webhook-driver.ts';

type Verify = (request: WebhookRequest, now: Date) => WebhookRequestProof | Promise<WebhookRequestProof>;

/**
 * A signed scheme's check run again, unchanged, on the stored bytes and signature headers, with
 * the driver's current secrets. The clock it is given is the signed timestamp itself (else the
 * time of the first verification): the tolerance then measures a skew of zero, so an event of last
 * month is not refused as a replay, while the timestamp is still covered by the signature (a
 * stored timestamp that was changed fails the HMAC).
 */
export async function reverifySignature(verify: Verify, stored: StoredWebhookRequest): Promise<Reverification> {
  const { proof } = stored;
  if (!('signed' in proof)) return { outcome: 'no_match', reason: `the stored proof (${proof.scheme}) holds no signature to check again` };
  const at = new Date(('signedAt' in proof ? proof.signedAt : null) ?? proof.verifiedAt);
  try {
    const again = await verify(storedRequest(stored.rawBody, proof.signed), at);
    return { outcome: 'matches', secret: 'secret' in again ? again.secret : null, by: 'signature' };
  } catch (error) {
    if (error instanceof SignatureError) return { outcome: 'no_match', reason: error.message };
    throw error;
  }
}

/**
 * A static token cannot be checked again: it IS the secret, so it was never stored. What was
 * stored is its fingerprint, compared with the fingerprints of the tokens configured now.
 */
export function reverifyByFingerprint(fingerprints: readonly string[], proof: WebhookRequestProof): Reverification {
  if (!('secret' in proof) || proof.secret === null) return { outcome: 'no_match', reason: `the stored proof (${proof.scheme}) names no configured secret` };
  const index = fingerprints.indexOf(proof.secret.fingerprint);
  if (index < 0) return { outcome: 'no_match', reason: `the token it carried (fingerprint ${proof.secret.fingerprint}) is not among the configured ones` };
  return { outcome: 'matches', secret: secretMatch(fingerprints, index), by: 'fingerprint' };
}
