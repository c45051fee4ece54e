import { SignatureError } from '../../errors.ts';
import type { ProviderDriver, WebhookRequest } from './webhook-driver.ts';
import { type TokenProof, secretMatch } from './proof.ts';
import { reverifyByFingerprint } from './reverify.ts';
import { secretFingerprints } from './secret-fingerprint.ts';
import { matchingTokenIndex, requireHeader } from './signature.ts';

/**
 * A fixed token in a header (Asaas `asaas-access-token`, Zoop `Authorization`), compared in
 * constant time with every configured token (several during a rotation). It authenticates the
 * sender, not the body: nothing binds the token to these bytes, so a leaked token lets anyone post
 * anything. Prefer a signed scheme where the gateway offers one; here TLS is the only integrity.
 * Dedupe key (generic driver): the id at idHeader/idPath, else the derived key (derived-key.ts).
 */

/** Throws SignatureError unless the header carries one of `tokens`; answers which one. The token itself is never in the proof. */
function verifyToken(header: string, request: WebhookRequest, tokens: readonly string[], fingerprints: readonly string[], now: Date): TokenProof {
  const received = requireHeader(request.header(header), header);
  const matched = matchingTokenIndex(received.trim(), tokens);
  if (matched < 0) {
    throw new SignatureError(
      'signature_mismatch',
      `The ${header} header does not carry the configured token. Check the token set at the gateway for this webhook.`,
    );
  }
  return { scheme: 'token', header, secret: secretMatch(fingerprints, matched), verifiedAt: now.toISOString() };
}

/** The ProviderDriver verify/reverify pair of a static token in `header`. */
export function tokenVerification(header: string, tokens: readonly string[]): Pick<ProviderDriver, 'verify' | 'reverify'> {
  const fingerprints = secretFingerprints(tokens);
  return {
    verify: (request, now) => verifyToken(header, request, tokens, fingerprints, now),
    reverify: (stored) => reverifyByFingerprint(fingerprints, stored.proof),
  };
}
