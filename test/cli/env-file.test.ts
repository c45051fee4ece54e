/**
 * inboxctl in a terminal that has none of the service's variables: it reads the env file the
 * service reads (INBOX_ENV_FILE, else .env), so DATABASE_URL and the secrets written there once
 * reach every terminal. The process's own environment wins over the file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let dir: string | undefined;
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('inboxctl with only INBOX_ENV_FILE set reads DATABASE_URL and the providers from the file', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'inbox-env-file-'));
  const file = path.join(dir, 'inbox.env');
  await writeFile(file, `DATABASE_URL=${database.url}\nWEBHOOK_SECRET_ASAAS=asaas-token-from-the-file\n`);
  const stats = await runInboxctl(['stats'], { INBOX_ENV_FILE: file });
  assert.equal(stats.code, 0, stats.stderr);
  // asaas is configured by the file alone: an event of it that is not there is "not found" (1), not an unknown provider (2).
  const show = await runInboxctl(['show', 'asaas', 'evt_not_there'], { INBOX_ENV_FILE: file });
  assert.equal(show.code, 1, show.stderr);
  const withoutFile = await runInboxctl(['show', 'asaas', 'evt_not_there'], { DATABASE_URL: database.url });
  assert.equal(withoutFile.code, 2, 'without the file, asaas is no provider of this terminal');

  // The environment wins: a DATABASE_URL set in the terminal is the one used.
  const overridden = await runInboxctl(['stats'], { INBOX_ENV_FILE: file, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
  assert.equal(overridden.code, 3, overridden.stderr);
  assert.match(overridden.stderr, /127\.0\.0\.1:1\/nowhere/);
});

test('an INBOX_ENV_FILE that cannot be read: one line naming it, exit 2', async () => {
  const run = await runInboxctl(['stats'], { INBOX_ENV_FILE: '/nonexistent/inbox.env' });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /INBOX_ENV_FILE: cannot read \/nonexistent\/inbox\.env \(ENOENT\)/);
});
