import { type CryptoKey, createRemoteJWKSet, errors } from 'jose';
import { SignatureError } from '../../errors.ts';
import { SigningKeysUnavailableError } from './signing-keys-error.ts';

/**
 * The public keys of a gateway that signs with a private key (Pagar.me v5), from its JWKS URL.
 * This is the one piece of driver I/O: jose's remote key set fetches once, caches, and on an
 * unknown `kid` fetches again (at most once per cooldown, so forged kids cannot turn every
 * request into a fetch at the gateway). jose picks the key by kid, kty and alg and honours
 * `use: "sig"`, as Pagar.me's official validator does.
 */
export type VerificationKeyFor = (kid: string, alg: 'RS256') => Promise<CryptoKey>;

export interface RemoteKeysOptions {
  url: URL;
  cooldownMs: number;
  cacheMaxAgeMs: number;
  timeoutMs: number;
}

export function remoteVerificationKeys(options: RemoteKeysOptions): VerificationKeyFor {
  const keySet = createRemoteJWKSet(options.url, {
    cooldownDuration: options.cooldownMs,
    cacheMaxAge: options.cacheMaxAgeMs,
    timeoutDuration: options.timeoutMs,
  });
  return async (kid, alg) => {
    try {
      return await keySet({ alg, kid });
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
        throw new SignatureError(
          'signature_mismatch',
          `No single ${alg} key with kid "${kid}" in the gateway's JWKS (${options.url.host}), even after re-fetching it. Is this delivery from the gateway?`,
        );
      }
      throw new SigningKeysUnavailableError(`The gateway's signing keys could not be fetched from ${options.url.host}; retry later.`, { cause: error });
    }
  };
}
