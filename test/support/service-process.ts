import { spawn } from 'node:child_process';
import { repoRoot } from '../cli/run-inboxctl.ts';

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node src/main.ts` as an operator starts it, with only the environment given, run until it
 * exits. A service that starts after all would run until killed: it is killed at the deadline, so
 * the test fails instead of hanging.
 */
export function runServiceUntilExit(env: Record<string, string>, options: { timeoutMs?: number } = {}): Promise<ExitedProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
