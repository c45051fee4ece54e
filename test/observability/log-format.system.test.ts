/**
 * LOG_FORMAT as a developer and a log shipper meet it: the service started as a process, its first
 * log line read from stdout. (The warning about no configured provider is logged before the port is
 * taken; a port held here makes the process stop right after it.)
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { type Server, createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { repoRoot } from '../cli/run-inboxctl.ts';
import { freePort } from '../support/free-port.ts';
import { runServiceUntilExit } from '../support/service-process.ts';

let holder: Server;
let port: number;
before(async () => {
  port = await freePort();
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
});
after(() => new Promise((resolve) => holder.close(resolve)));

const settings = () => ({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/unused' });
// eslint-disable-next-line no-control-regex
const withoutColours = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

test('LOG_FORMAT=pretty: one readable line per entry (time, level, message), no JSON', async () => {
  const exited = await runServiceUntilExit({ ...settings(), LOG_FORMAT: 'pretty' });
  const line = withoutColours(exited.stdout).split('\n')[0]!;
  assert.match(line, /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: no provider is configured/, exited.stdout);
  assert.doesNotMatch(exited.stdout, /"level":/);
});

test('unset on a pipe, or LOG_FORMAT=json: one JSON object per line', async () => {
  for (const format of [undefined, 'json']) {
    const exited = await runServiceUntilExit({ ...settings(), ...(format && { LOG_FORMAT: format }) });
    const entry = JSON.parse(exited.stdout.split('\n')[0]!) as { level: number; msg: string };
    assert.equal(entry.level, 40);
    assert.match(entry.msg, /no provider is configured/);
  }
});

const hasScript = spawnSync('script', ['--version']).status === 0;

test('unset on a terminal: pretty', { skip: hasScript ? false : 'util-linux `script` is not installed: no pseudo-terminal to run the service on' }, () => {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...settings() };
  // `script` gives the service a pseudo-terminal as its stdout, as a developer's shell does.
  const run = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} src/main.ts`, '/dev/null'], {
    cwd: repoRoot,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const text = withoutColours(run.stdout);
  assert.match(text, /\] WARN: no provider is configured/, text);
  assert.doesNotMatch(text, /"level":/);
});

test('an unknown LOG_FORMAT is a configuration error naming it', async () => {
  const exited = await runServiceUntilExit({ ...settings(), LOG_FORMAT: 'yaml' });
  assert.equal(exited.code, 1);
  assert.match(exited.stderr, /^Invalid configuration:\n {2}- LOG_FORMAT: /);
});
