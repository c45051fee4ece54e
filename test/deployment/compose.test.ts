/**
 * compose.yaml, checked without Docker: valid against the Compose Specification's JSON schema (a
 * copy under test/deployment/compose-spec/, its source in SOURCE.md), and the inbox service's
 * environment is one the service accepts, pointing at the PostgreSQL service beside it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load-config.ts';
import { repoRoot } from '../cli/run-inboxctl.ts';

const schema = JSON.parse(readFileSync(path.join(repoRoot, 'test/deployment/compose-spec/compose-spec.json'), 'utf8')) as object;
// The schema names its draft by an https URL ajv does not know as draft-07's; the draft itself is ajv's default.
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });
const validate = ajv.compile(schema);

const compose = () =>
  parse(readFileSync(path.join(repoRoot, 'compose.yaml'), 'utf8')) as { services: Record<string, { environment?: Record<string, string> }> };

test('compose.yaml is valid against the Compose Specification schema', () => {
  assert.ok(validate(compose()), JSON.stringify(validate.errors, null, 2));
});

test('the schema check can fail: a port that is an object, an unknown service key', () => {
  assert.equal(validate({ services: { inbox: { image: 'x', ports: [{ nonsense: true }] } } }), false);
  assert.equal(validate({ services: { inbox: { image: 'x', healthcheck: { test: 'true', intervall: '5s' } } } }), false);
});

/** Compose's interpolation for the forms the file uses: ${NAME}, ${NAME:-default}, ${NAME:?message}. */
function interpolate(value: string, variables: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_match, name: string, operator: string | undefined, operand: string) => {
    const set = variables[name];
    if (set !== undefined && set !== '') return set;
    if (operator === '-') return operand;
    if (operator === '?') throw new Error(`${name}: ${operand}`);
    return '';
  });
}

test("the inbox service's environment is one the service accepts, with DATABASE_URL naming the postgres service", () => {
  const { services } = compose();
  assert.throws(
    () => interpolate(services.inbox!.environment!.WEBHOOK_SECRET_STRIPE!, {}),
    /WEBHOOK_SECRET_STRIPE: set WEBHOOK_SECRET_STRIPE/,
    'the secret is required, not defaulted',
  );
  const env = Object.fromEntries(
    Object.entries(services.inbox!.environment!).map(([name, value]) => [name, interpolate(value, { WEBHOOK_SECRET_STRIPE: 'whsec_compose' })]),
  );
  const config = loadConfig(env, () => {
    throw new Error('compose.yaml names no INBOX_CONFIG file');
  });
  assert.equal(new URL(config.databaseUrl!).hostname, 'postgres');
  assert.ok(Object.keys(services).includes('postgres'));
  assert.deepEqual([...config.providers.keys()], ['stripe']);
});
