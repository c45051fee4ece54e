/**
 * The value with every U+0000 dropped from its strings and keys: jsonb cannot hold one, and an
 * entry (or a finding's evidence) that carries one keeps the rest of what it said.
 */
export function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\0', '');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replaceAll('\0', ''), withoutNul(item)]));
  return value;
}
