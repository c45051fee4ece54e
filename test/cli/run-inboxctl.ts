import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliOutput } from '../../src/cli/context.ts';
import { runInboxctl as runInboxctlInProcess } from '../../src/cli/inboxctl.ts';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface InboxctlRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout as text. */
  out: string;
  json<T = any>(): T;
}

export interface SpawnOptions {
  /**
   * Close the reading end of stdout before the child writes anything, as `| head` does once it
   * has its lines: every write the child makes then fails with EPIPE.
   */
  closeStdout?: boolean;
}

/** The environment the bin is given: only the variables passed, plus what a shell always has. */
function cliEnvironment(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...env };
}

function runOf(code: number | null, stdout: Buffer, stderr: Buffer): InboxctlRun {
  return { code, stdout, stderr: stderr.toString('utf8'), out: stdout.toString('utf8'), json: () => JSON.parse(stdout.toString('utf8')) };
}

function collector(chunks: Buffer[]): CliOutput {
  return {
    write: (chunk) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
      return true;
    },
  };
}

/**
 * `inboxctl …` run in this process through the runner the bin calls (src/cli/inboxctl.ts), with
 * the same runtime the bin builds — only the environment given, files read from the checkout,
 * the OS user — but stdout and stderr captured. A boot of the bin costs most of a second of CPU
 * before any SQL; the suite runs hundreds of commands, so only the bin's smoke test (bin.test.ts)
 * and the closed-pipe tests spawn the real process.
 */
export async function runInboxctl(args: string[], env: Record<string, string>, options: { stdout?: CliOutput } = {}): Promise<InboxctlRun> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const code = await runInboxctlInProcess(args, {
    env: cliEnvironment(env),
    readFile: (file) => readFileSync(path.resolve(repoRoot, file), 'utf8'),
    // Another stdout (a closed pipe) instead of the captured one: `out` is then empty.
    stdout: options.stdout ?? collector(out),
    stderr: collector(err),
    now: () => new Date(),
    user: () => userInfo().username,
  });
  return runOf(code, Buffer.concat(out), Buffer.concat(err));
}

/**
 * The real binary in a child process (`node bin/inboxctl.ts …`), with only the environment given:
 * the same variables the service reads.
 */
export function spawnInboxctl(args: string[], env: Record<string, string>, options: SpawnOptions = {}): Promise<InboxctlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/inboxctl.ts', ...args], {
      cwd: repoRoot,
      env: cliEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    // Closed in the same tick as the spawn: the child is still starting, so it has written nothing yet.
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve(runOf(code, Buffer.concat(out), Buffer.concat(err))));
  });
}
