/**
 * docs/configuration.md cannot drift from the schemas: its generated sections are what
 * `npm run docs:config` writes from them, every variable and INBOX_CONFIG key has a meaning, and
 * the defaults written by hand (`whenUnset`, where a default is computed) are what parsing does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { z } from 'zod';
import { parseConfig } from '../../src/config/config.ts';
import { envVariables } from '../../src/config/env-variables.ts';
import { configurationReference, renderEnvironment, renderFileKeys } from '../../src/config/configuration-reference.ts';
import { CONFIGURATION_DOC_COMMAND, CONFIGURATION_DOC_PATH, withGeneratedSections } from '../../src/config/write-configuration-doc.ts';

const noFiles = (path: string): string => {
  throw new Error(`ENOENT: ${path}`);
};

test('docs/configuration.md is what `npm run docs:config` writes from the schemas', () => {
  const committed = readFileSync(CONFIGURATION_DOC_PATH, 'utf8');
  const { sections } = configurationReference();
  assert.ok(
    committed === withGeneratedSections(committed, sections),
    `${CONFIGURATION_DOC_PATH} is stale: run \`${CONFIGURATION_DOC_COMMAND}\` and commit ${CONFIGURATION_DOC_PATH} (a variable or INBOX_CONFIG key, or its meaning, changed in src/config/)`,
  );
});

test('every variable and INBOX_CONFIG key the service parses has a meaning, and one default', () => {
  const { problems } = configurationReference();
  assert.deepEqual(problems, [], `give each a meaning beside its zod schema, then run \`${CONFIGURATION_DOC_COMMAND}\`:\n${problems.join('\n')}`);
});

test('a variable parsed without a meaning is named, and so is one with two defaults', () => {
  const shape = {
    DOCUMENTED: z.string().default('x').describe('Has a meaning.'),
    UNDOCUMENTED: z.string().optional(),
    TWO_DEFAULTS: z.coerce.number().default(3).meta({ description: 'Says 4.', whenUnset: '`4`' }),
  };
  const { markdown, problems } = renderEnvironment(shape, [{ name: 'SECRET_<NAME>', description: 'By hand.' }]);
  assert.deepEqual(
    problems.map((p) => p.split(':')[0]),
    ['UNDOCUMENTED', 'TWO_DEFAULTS'],
  );
  assert.match(markdown, /\| `DOCUMENTED` \| `x` \| Has a meaning\. \|/);
  assert.match(markdown, /\| `SECRET_<NAME>` \| — \| By hand\. \|/);
});

test("an INBOX_CONFIG object without a meaning of its own is its keys' rows; a key without one is named", () => {
  const providers = z.looseObject({
    driver: z.string().describe('Required.'),
    api: z.strictObject({ key: z.string().optional(), timeoutMs: z.number().optional().describe('T.') }).optional(),
  });
  const destinations = z.strictObject({ start: z.string().optional().meta({ whenUnset: '`"now"`', description: 'S.' }) });
  const { markdown, problems } = renderFileKeys(providers, destinations);
  assert.deepEqual(problems, ["INBOX_CONFIG api.key: has no meaning; give its schema one with .describe('…') (or .meta({ description }))"]);
  assert.match(markdown, /\| `driver` \| required \| Required\. \|/);
  assert.match(markdown, /\| `api\.timeoutMs` \| — \| T\. \|/);
  assert.match(markdown, /\| `start` \| `"now"` \| S\. \|/);
});

test('the page keeps its hand-written prose and refuses to be written without its markers', () => {
  const page =
    'before\n<!-- generated: environment (npm run docs:config; the meanings live beside the zod schemas in src/config/) -->\nold\n<!-- end generated: environment -->\nafter\n';
  const sections = { environment: 'NEW', 'inbox-config': 'KEYS' };
  assert.throws(() => withGeneratedSections(page, sections), /must hold the line <!-- generated: inbox-config/);
  const both = `${page}<!-- generated: inbox-config (npm run docs:config; the meanings live beside the zod schemas in src/config/) -->\n<!-- end generated: inbox-config -->\nend\n`;
  const written = withGeneratedSections(both, sections);
  assert.match(written, /^before\n<!-- generated: environment [^\n]*-->\n\nNEW\n\n<!-- end generated: environment -->\nafter\n/);
  assert.match(written, /\n\nKEYS\n\n<!-- end generated: inbox-config -->\nend\n$/);
  assert.equal(withGeneratedSections(written, sections), written);
});

test('the defaults written by hand are what parsing makes of an unset variable', () => {
  const whenUnset = (name: keyof typeof envVariables.shape) => envVariables.shape[name].meta()?.whenUnset;
  const parsed = (env: Record<string, string>) => {
    const result = parseConfig(env, noFiles);
    assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
    return result.config;
  };
  assert.equal(whenUnset('INGEST_LINGER_MS'), '`4` in `receiver`, `0` in `all`');
  assert.equal(parsed({ INBOX_ROLE: 'receiver' }).commitLingerMs, 4);
  assert.equal(parsed({ INBOX_ROLE: 'all' }).commitLingerMs, 0);
  assert.equal(whenUnset('WORKER_HEARTBEAT_SECONDS'), '`30`');
  assert.equal(parsed({}).worker.heartbeatSeconds, 30);
  assert.equal(whenUnset('INBOX_DASHBOARD'), 'on if `INBOX_ADMIN_TOKEN` is set, else off');
  assert.equal(parsed({}).dashboard.enabled, false);
  assert.equal(parsed({ INBOX_ADMIN_TOKEN: 'a'.repeat(16) }).dashboard.enabled, true);
  assert.equal(whenUnset('INBOX_ARCHIVE_DIR'), '`<INBOX_DATA_DIR>/archive`');
  assert.equal(parsed({ INBOX_DATA_DIR: '/srv/inbox' }).operations.archiveDir, '/srv/inbox/archive');
  assert.equal(whenUnset('DATABASE_URL'), 'unset → embedded');
  assert.equal(parsed({}).databaseUrl, undefined);
});
