import { type KeyObject, generateKeyPairSync, sign } from 'node:crypto';
import { type Server, createServer } from 'node:http';

/** A locally generated RSA key, as a JWK for the JWKS and a signer for Pagar.me's header. */
export interface TestSigningKey {
  kid: string;
  jwk: Record<string, unknown>;
  /** The `X-Webhook-Asymmetric-Signature` value for `body`, made with node:crypto. */
  header(body: string): string;
}

export function generateSigningKey(kid: string): TestSigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    kid,
    jwk: { ...(publicKey as KeyObject).export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' },
    header: (body) => `alg=RS256; kid=${kid}; signature=${sign('sha256', Buffer.from(body), privateKey).toString('base64url')}`,
  };
}

/** A real HTTP server on loopback serving a JWKS the test can rotate or break, counting fetches. */
export interface JwksServer {
  url: string;
  fetches: number;
  keys: TestSigningKey[];
  failWithStatus: number | undefined;
  close(): Promise<void>;
}

export async function startJwksServer(keys: TestSigningKey[]): Promise<JwksServer> {
  const state = { fetches: 0, keys, failWithStatus: undefined as number | undefined };
  const server: Server = createServer((_request, response) => {
    state.fetches += 1;
    if (state.failWithStatus !== undefined) {
      response.writeHead(state.failWithStatus).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as JwksServer;
}
