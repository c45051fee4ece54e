/** More keys than a rotation needs (old, new, and one more for a change of scheme) is a mistake. */
const MAX_SECRETS = 4;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function base64Bytes(encoded: string): number | undefined {
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return undefined;
  return Buffer.from(encoded, 'base64').length;
}

/**
 * One Standard Webhooks signing secret: `whsec_` and the base64 of 24 to 64 random bytes (HMAC,
 * `v1`), or `whsk_` and the base64 of a 32-byte ed25519 seed (`v1a`). The message never holds the value.
 */
function secretProblem(value: string): string | undefined {
  if (value.startsWith('whsk_')) {
    const bytes = base64Bytes(value.slice('whsk_'.length));
    if (bytes === undefined) return 'must be whsk_ followed by base64';
    if (bytes !== 32) return `must hold a 32-byte ed25519 seed (this one holds ${bytes}); see docs/destinations.md for making a key pair`;
    return undefined;
  }
  if (!value.startsWith('whsec_')) return 'must be a Standard Webhooks secret, whsec_<base64> (or whsk_<base64> for ed25519)';
  const bytes = base64Bytes(value.slice('whsec_'.length));
  if (bytes === undefined) return 'must be whsec_ followed by base64';
  if (bytes < 24 || bytes > 64) return `must hold 24 to 64 bytes of key (this one holds ${bytes}): e.g. whsec_$(openssl rand -base64 32)`;
  return undefined;
}

/**
 * DESTINATION_SECRET_<NAME>: one secret, or several separated by spaces during a rotation (each
 * signs every event; the signatures share one header, in this order). Problems name the variable
 * and the secret's position, never its value.
 */
export function parseDestinationSecrets(variable: string, value: string, problems: string[]): string[] | undefined {
  const secrets = value
    .trim()
    .split(/\s+/)
    .filter((s) => s !== '');
  const before = problems.length;
  if (secrets.length === 0) problems.push(`${variable}: is empty; set a secret (whsec_<base64>)`);
  if (secrets.length > MAX_SECRETS) problems.push(`${variable}: holds ${secrets.length} secrets; at most ${MAX_SECRETS} (a rotation needs two)`);
  if (new Set(secrets).size !== secrets.length) problems.push(`${variable}: names the same secret twice`);
  secrets.forEach((secret, i) => {
    const problem = secretProblem(secret);
    if (problem) problems.push(`${variable}${secrets.length > 1 ? ` (secret ${i + 1} of ${secrets.length})` : ''}: ${problem}`);
  });
  return problems.length > before ? undefined : secrets;
}
