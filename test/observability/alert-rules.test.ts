import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createMetrics } from '../../src/observability/metrics.ts';

const RULES = 'ops/prometheus-rules.yml';
const RULE_TESTS = 'ops/prometheus-rules.test.yml';
const promtool = spawnSync('promtool', ['--version']).status === 0;

describe('ops/prometheus-rules.yml', () => {
  test('every metric the rules read is one the service exports', async () => {
    const rules = readFileSync(RULES, 'utf8');
    const used = new Set(rules.match(/\b(?:inbox|webhook|pgboss)_[a-z_]+\b/g));
    const exported = new Set((await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    assert.ok(used.size >= 3, [...used].join(', '));
    for (const name of used) assert.ok(exported.has(name), `${name} is not exported`);
  });

  test('the rules read no metric by a deprecated name (docs/observability.md, Renamed metrics)', async () => {
    const rules = readFileSync(RULES, 'utf8');
    const deprecated = (await createMetrics().registry.getMetricsAsJSON()).filter((m) => m.help.startsWith('Deprecated alias')).map((m) => m.name);
    assert.ok(deprecated.length > 0, 'the aliases are there to be checked');
    for (const name of deprecated) assert.ok(!new RegExp(`\\b${name}\\b`).test(rules), `${name} is a deprecated alias: read its new name`);
  });

  test('the alerts exist', () => {
    const rules = readFileSync(RULES, 'utf8');
    for (const alert of [
      'WebhookInboxEventsFailed',
      'WebhookInboxPendingStuck',
      'WebhookInboxIgnoredRatioJump',
      'WebhookInboxConflictingDuplicates',
      'WebhookInboxLanesParked',
      'WebhookInboxDestinationDisabled',
      'WebhookInboxDestinationNotRetired',
      'WebhookInboxMoneyEventRejected',
      'WebhookInboxProviderSilent',
      'WebhookInboxReconciliationFindings',
      'WebhookInboxReconciliationStale',
    ]) {
      assert.match(rules, new RegExp(`- alert: ${alert}\\n`));
    }
  });

  test('promtool accepts the rules and their unit tests pass', {
    skip: promtool ? false : 'promtool is not on PATH (Debian: apt-get install prometheus)',
  }, () => {
    execFileSync('promtool', ['check', 'rules', RULES], { stdio: 'pipe' });
    // The unit tests replay a week of samples for the ignored-ratio baseline.
    const result = spawnSync('promtool', ['test', 'rules', RULE_TESTS], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });
});
