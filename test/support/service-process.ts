import { type SpawnOptions, spawn } from 'node:child_process';
import { repoRoot } from '../cli/run-inboxctl.ts';

export interface ExitedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end, its output collected. One that runs on past the deadline (a service
 * that started after all) is killed, so the test fails instead of hanging.
 */
export function runUntilExit(command: string, args: string[], options: SpawnOptions & { timeoutMs?: number }): Promise<ExitedProcess> {
  const { timeoutMs = 60_000, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `node src/main.ts` as an operator starts it, with only the environment given, run until it exits. */
export function runServiceUntilExit(env: Record<string, string>, options: { timeoutMs?: number } = {}): Promise<ExitedProcess> {
  return runUntilExit(process.execPath, ['src/main.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    timeoutMs: options.timeoutMs,
  });
}
