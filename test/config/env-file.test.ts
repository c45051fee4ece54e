import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withEnvFile } from '../../src/config/env-file.ts';
import { ConfigError } from '../../src/errors.ts';

const files = (contents: Record<string, string>) => (path: string) => {
  if (path in contents) return contents[path]!;
  throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
};

test('unset INBOX_ENV_FILE: .env is read when there is one, and the environment wins over it', () => {
  const read = files({ '.env': 'DATABASE_URL=postgres://u@db:5432/inbox\nWEBHOOK_SECRET_STRIPE="whsec_from_file"\n# a comment\nLOG_LEVEL=debug\n' });
  const { env, file } = withEnvFile({ LOG_LEVEL: 'warn', PATH: '/bin' }, read);
  assert.equal(file, '.env');
  assert.deepEqual(env, { DATABASE_URL: 'postgres://u@db:5432/inbox', WEBHOOK_SECRET_STRIPE: 'whsec_from_file', LOG_LEVEL: 'warn', PATH: '/bin' });
});

test('no .env: the environment as it is', () => {
  assert.deepEqual(withEnvFile({ PATH: '/bin' }, files({})), { env: { PATH: '/bin' }, file: undefined });
});

test('INBOX_ENV_FILE names the file; set and empty, none is read; one that cannot be read is a configuration error naming it', () => {
  const read = files({ '/etc/inbox.env': 'INBOX_ROLE=worker\n', '.env': 'INBOX_ROLE=receiver\n' });
  assert.equal(withEnvFile({ INBOX_ENV_FILE: '/etc/inbox.env' }, read).env.INBOX_ROLE, 'worker');
  assert.equal(withEnvFile({ INBOX_ENV_FILE: '' }, read).env.INBOX_ROLE, undefined);
  assert.throws(
    () => withEnvFile({ INBOX_ENV_FILE: '/etc/missing.env' }, read),
    (error: unknown) => error instanceof ConfigError && /INBOX_ENV_FILE: cannot read \/etc\/missing\.env \(ENOENT\)/.test(error.message),
  );
});
