import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkerConfig } from '../../src/config/config.ts';
import { type AppConfig, loadConfig } from '../../src/config/load-config.ts';
import { ConfigError } from '../../src/errors.ts';

/** Retries in seconds, not minutes, so failure paths finish inside a test. */
export const testWorkerConfig: WorkerConfig = {
  maxAttempts: 3,
  retryDelaySeconds: 1,
  retryDelayMaxSeconds: 1,
  expireInSeconds: 60,
  heartbeatSeconds: 30,
  batchSize: 20,
  concurrency: 4,
  pollingIntervalSeconds: 0.5,
  shutdownTimeoutMs: 5000,
};

/** A configuration read the way production reads it (loadConfig), from a test's own env. */
export function testConfig(env: Record<string, string>, files: Record<string, string> = {}): AppConfig {
  const config = loadConfig(
    { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', INBOX_ARCHIVE_DIR: path.join(tmpdir(), 'inbox-test-archive'), ...env },
    (path) => {
      const content = files[path];
      if (content === undefined) throw new Error(`ENOENT: ${path}`);
      return content;
    },
  );
  return { ...config, worker: { ...testWorkerConfig, ...overridesFrom(env, config.worker) } };
}

function overridesFrom(env: Record<string, string>, loaded: WorkerConfig): Partial<WorkerConfig> {
  const overrides: Partial<WorkerConfig> = {};
  if (env.WORKER_MAX_ATTEMPTS) overrides.maxAttempts = Number(env.WORKER_MAX_ATTEMPTS);
  if (env.WORKER_EXPIRE_IN_SECONDS) overrides.expireInSeconds = Number(env.WORKER_EXPIRE_IN_SECONDS);
  // The heartbeat's default depends on the expiry: take it as loadConfig resolved it.
  if (env.WORKER_EXPIRE_IN_SECONDS || env.WORKER_HEARTBEAT_SECONDS) overrides.heartbeatSeconds = loaded.heartbeatSeconds;
  return overrides;
}

/** A file reader for loadConfig that has no files: every read fails as a missing file does. */
export function noFiles(path: string): string {
  throw new Error(`ENOENT: ${path}`);
}

/** The problems a ConfigError lists; fails the test when `run` does not throw one. */
export function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail('expected a ConfigError');
}
