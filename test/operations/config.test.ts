import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { ConfigError } from '../../src/errors.ts';
import { noFiles } from '../support/config.ts';

describe('operations configuration', () => {
  test('defaults: sweep every 5 minutes for rows pending 5 minutes, 500 at a time; retention daily; archives under the data folder; reconciliation daily over 7 days, announced payouts every 15 minutes', () => {
    const { operations } = loadConfig({ INBOX_DATA_DIR: '/var/lib/inbox' }, noFiles);
    assert.deepEqual(operations, {
      sweepCron: '*/5 * * * *',
      sweepPendingOlderThanSeconds: 300,
      sweepBatchSize: 500,
      retentionCron: '15 3 * * *',
      retentionBatchSize: 500,
      archiveDir: '/var/lib/inbox/archive',
      reconcileCron: '45 4 * * *',
      reconcileWindowDays: 7,
      reconcilePayoutsCron: '*/15 * * * *',
    });
  });

  test('every setting comes from its variable, and a bad one is listed with the others', () => {
    const env = {
      SWEEP_CRON: '*/2 * * * *',
      SWEEP_PENDING_OLDER_THAN_SECONDS: '120',
      SWEEP_BATCH_SIZE: '50',
      RETENTION_CRON: '0 4 * * *',
      RETENTION_BATCH_SIZE: '100',
      INBOX_ARCHIVE_DIR: '/mnt/archive',
      RECONCILE_CRON: '0 6 * * *',
      RECONCILE_WINDOW_DAYS: '14',
      RECONCILE_PAYOUTS_CRON: '*/30 * * * *',
    };
    assert.deepEqual(loadConfig(env, noFiles).operations, {
      sweepCron: '*/2 * * * *',
      sweepPendingOlderThanSeconds: 120,
      sweepBatchSize: 50,
      retentionCron: '0 4 * * *',
      retentionBatchSize: 100,
      archiveDir: '/mnt/archive',
      reconcileCron: '0 6 * * *',
      reconcileWindowDays: 14,
      reconcilePayoutsCron: '*/30 * * * *',
    });
    assert.throws(
      () => loadConfig({ SWEEP_CRON: 'every five minutes', RETENTION_BATCH_SIZE: '0' }, noFiles),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.some((p) => p.startsWith('SWEEP_CRON')) &&
        error.problems.some((p) => p.startsWith('RETENTION_BATCH_SIZE')),
    );
  });
});
