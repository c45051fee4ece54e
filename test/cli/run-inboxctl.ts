import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface InboxctlRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout as text. */
  out: string;
  json<T = any>(): T;
}

export interface RunOptions {
  /**
   * Close the reading end of stdout before the child writes anything, as `| head` does once it
   * has its lines: every write the child makes then fails with EPIPE.
   */
  closeStdout?: boolean;
}

/**
 * The real binary in a child process (`node bin/inboxctl.ts …`), with only the environment given:
 * the same variables the service reads.
 */
export function runInboxctl(args: string[], env: Record<string, string>, options: RunOptions = {}): Promise<InboxctlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/inboxctl.ts', ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    // Closed in the same tick as the spawn: the child is still starting, so it has written nothing yet.
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      resolve({
        code,
        stdout,
        stderr: Buffer.concat(err).toString('utf8'),
        out: stdout.toString('utf8'),
        json: () => JSON.parse(stdout.toString('utf8')),
      });
    });
  });
}
