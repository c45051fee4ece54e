import { z } from 'zod';

/**
 * The proof of how an event was authenticated, stored with it (webhook_inbox.verification): the
 * scheme, which configured secret matched (its position in the rotation list and a fingerprint,
 * never the secret), the signed timestamp where the scheme has one, when it was verified, and the
 * signature headers the check read — so `inboxctl verify` can run the same check again on the
 * stored bytes against the secrets configured later. Every driver builds its proof here.
 */

/** Which configured secret matched. */
export interface SecretMatch {
  /** 1-based position in the provider's rotation list (`WEBHOOK_SECRET_X=new,old`: new is 1). */
  position: number;
  /** secret-fingerprint.ts: a slow, short hash; never the secret. */
  fingerprint: string;
}

/**
 * What the signature check read besides the body: signature headers (and Mercado Pago's signed
 * query value). Signatures are not secret (every proxy on the way sees them); header values that
 * ARE the secret (static tokens, Basic Auth) are never kept: those schemes are audited by
 * fingerprint instead.
 */
export interface SignedMaterial {
  headers: Record<string, string>;
  query?: Record<string, string>;
}

/** Schemes whose signature is an HMAC keyed with a configured secret: re-verifiable from the stored bytes. */
export type SecretSignatureScheme = 'stripe-v1' | 'standard-webhooks' | 'hmac-sha256' | 'hmac-sha1' | 'mercadopago';

export interface SecretSignatureProof {
  scheme: SecretSignatureScheme;
  secret: SecretMatch;
  /** ISO time the sender signed (Stripe `t`, `webhook-timestamp`, Mercado Pago `ts`, an hmac timestamp header); null when the scheme has none. */
  signedAt: string | null;
  verifiedAt: string;
  signed: SignedMaterial;
}

/** Pagar.me v5: RS256 with the gateway's JWKS key `kid`; `secret` is the optional Basic Auth credential. */
export interface PagarmeProof {
  scheme: 'pagarme-rs256';
  kid: string;
  secret: SecretMatch | null;
  verifiedAt: string;
  signed: SignedMaterial;
}

/** A static token in a header (Asaas, Zoop, the generic `token` driver): it authenticates the sender, not the bytes. */
export interface TokenProof {
  scheme: 'token';
  header: string;
  secret: SecretMatch;
  verifiedAt: string;
}

/** Accepted without any check (Zoop with no token configured). */
export interface UnauthenticatedProof {
  scheme: 'none';
  verifiedAt: string;
}

/** What a driver's verify returns for a request. */
export type WebhookRequestProof = SecretSignatureProof | PagarmeProof | TokenProof | UnauthenticatedProof;

/**
 * An event not received by webhook but read from the gateway's API (a backfill): authentic
 * because this service fetched it over TLS with its API key, from `endpoint`, at `fetchedAt`.
 */
export interface GatewayApiProof {
  scheme: 'gateway-api';
  endpoint: string;
  fetchedAt: string;
}

export type VerificationProof = WebhookRequestProof | GatewayApiProof;

/** A stored request, as `inboxctl verify` hands it to its provider's driver. */
export interface StoredWebhookRequest {
  rawBody: Buffer;
  proof: WebhookRequestProof;
}

/** Whether a stored request still verifies against the secrets configured now, and with which. */
export type Reverification =
  | {
      outcome: 'matches';
      /** The configured secret that matches now; null where no configured secret is involved (a Pagar.me JWKS key). */
      secret: SecretMatch | null;
      /** `signature`: the check ran again on the stored bytes; `fingerprint`: a token scheme, compared by its fingerprint. */
      by: 'signature' | 'fingerprint';
    }
  | { outcome: 'no_match'; reason: string };

export function secretMatch(fingerprints: readonly string[], index: number): SecretMatch {
  return { position: index + 1, fingerprint: fingerprints[index]! };
}

const secretMatchSchema = z.object({ position: z.number().int().positive(), fingerprint: z.string() });
const signedMaterialSchema = z.object({ headers: z.record(z.string(), z.string()), query: z.record(z.string(), z.string()).optional() });

/** Reads a stored proof back (jsonb → typed); rows stored before proofs existed hold null. */
export const verificationProofSchema: z.ZodType<VerificationProof> = z.discriminatedUnion('scheme', [
  z.object({
    scheme: z.enum(['stripe-v1', 'standard-webhooks', 'hmac-sha256', 'hmac-sha1', 'mercadopago']),
    secret: secretMatchSchema,
    signedAt: z.string().nullable(),
    verifiedAt: z.string(),
    signed: signedMaterialSchema,
  }),
  z.object({ scheme: z.literal('pagarme-rs256'), kid: z.string(), secret: secretMatchSchema.nullable(), verifiedAt: z.string(), signed: signedMaterialSchema }),
  z.object({ scheme: z.literal('token'), header: z.string(), secret: secretMatchSchema, verifiedAt: z.string() }),
  z.object({ scheme: z.literal('none'), verifiedAt: z.string() }),
  z.object({ scheme: z.literal('gateway-api'), endpoint: z.string(), fetchedAt: z.string() }),
]);

export const describeSecretMatch = (secret: SecretMatch): string => `secret #${secret.position} (fingerprint ${secret.fingerprint})`;

/** One line for operators (`inboxctl show`, the dashboard): never more than the proof holds, so never a secret. */
export function describeProof(proof: VerificationProof, time: (iso: string) => string = (iso) => iso): string {
  switch (proof.scheme) {
    case 'gateway-api':
      return `gateway-api: fetched from ${proof.endpoint} at ${time(proof.fetchedAt)}`;
    case 'none':
      return `none: accepted without authentication (no token configured) at ${time(proof.verifiedAt)}`;
    case 'token':
      return `token in ${proof.header}: ${describeSecretMatch(proof.secret)}, verified ${time(proof.verifiedAt)}`;
    case 'pagarme-rs256':
      return `pagarme-rs256: JWKS key kid=${proof.kid}${proof.secret ? `, Basic Auth ${describeSecretMatch(proof.secret)}` : ''}, verified ${time(proof.verifiedAt)}`;
    default:
      return `${proof.scheme}: ${describeSecretMatch(proof.secret)}${proof.signedAt ? `, signed ${time(proof.signedAt)}` : ''}, verified ${time(proof.verifiedAt)}`;
  }
}
