import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { BOSS_SCHEMA } from '../../src/queue/boss.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';

// src/queue/embedded-job-insert.ts embeds pg-boss's own job insert in the receiver's one statement
// (src/inbox/sql/store-events.ts). It imports a module pg-boss does not publish (no exports map,
// no semver promise), so package.json pins pg-boss exactly and this file says, before any
// delivery does, which assumption an upgrade broke. The upgrade steps: docs/ARCHITECTURE.md,
// "Pinned dependencies".

const PLANS_SPECIFIER = 'pg-boss/dist/plans.js';
const PLANS_FILE = 'node_modules/pg-boss/dist/plans.js';
const RECEIVER_FILE = 'src/queue/embedded-job-insert.ts';
const UPGRADE = `Fix ${RECEIVER_FILE} for this pg-boss (see docs/ARCHITECTURE.md, "Pinned dependencies"), or stay on the pinned version.`;
const TABLE = 'job_common';
const SCHEMA = BOSS_SCHEMA;

type Plans = Record<string, unknown>;
type InsertJobs = (schema: string, options: { table: string; name: string; returnId?: boolean; notify?: boolean }) => string;
type NotifyChannelSql = (schema: string) => string;

// Imported when a test runs, not when this file loads: a plans.js that moved must fail these tests
// with the message below, not fail to load the file.
async function loadPlans(): Promise<Plans> {
  try {
    // A variable specifier: the question is what node resolves at run time, not what tsc saw.
    const specifier: string = PLANS_SPECIFIER;
    return (await import(specifier)) as Plans;
  } catch (error) {
    assert.fail(`${RECEIVER_FILE} imports '${PLANS_SPECIFIER}', which no longer loads (${(error as Error).message}). ${UPGRADE}`);
  }
}

/** The literal the receiver splits pg-boss's insert on, as the receiver declares it. */
async function jobsParameter(): Promise<string> {
  await loadPlans();
  return (await import('../../src/queue/embedded-job-insert.ts')).JOBS_PARAMETER;
}

function exportedFunction<T>(plans: Plans, name: string, usedFor: string): T {
  assert.equal(typeof plans[name], 'function', `${PLANS_FILE} no longer exports the function ${name}(), which ${RECEIVER_FILE} calls ${usedFor}. ${UPGRADE}`);
  return plans[name] as T;
}

const insertJobsOf = (plans: Plans) => exportedFunction<InsertJobs>(plans, 'insertJobs', "for pg-boss's job insert");
const notifyChannelSqlOf = (plans: Plans) => exportedFunction<NotifyChannelSql>(plans, 'notifyChannelSql', "for the channel pg-boss's workers LISTEN on");

/** The statement the receiver embeds, built as webhookJobInsert builds it. */
const receiverInsert = (plans: Plans) => insertJobsOf(plans)(SCHEMA, { table: TABLE, name: WEBHOOKS_QUEUE, returnId: true, notify: false });
const insertJobsCall = `insertJobs('${SCHEMA}', { table, name: '${WEBHOOKS_QUEUE}', returnId: true, notify: false })`;

test('package.json pins pg-boss to exactly the version installed, the one this shape was checked on', () => {
  const spec = (JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> }).dependencies['pg-boss'];
  const installed = (createRequire(import.meta.url)('pg-boss/package.json') as { version: string }).version;
  assert.equal(
    spec,
    installed,
    `package.json asks for pg-boss "${spec}" and ${installed} is installed: ${RECEIVER_FILE} imports its private ${PLANS_FILE}, so pg-boss is pinned to an exact version (no ^ or ~): write "pg-boss": "${installed}", or upgrade on purpose (docs/ARCHITECTURE.md, "Pinned dependencies").`,
  );
});

test("pg-boss's job insert reads its jobs from one parameter, the literal the receiver splits on", async () => {
  const JOBS_PARAMETER = await jobsParameter();
  const text = receiverInsert(await loadPlans());
  const occurrences = text.split(JOBS_PARAMETER).length - 1;
  assert.equal(
    occurrences,
    1,
    `${PLANS_FILE}: ${insertJobsCall} contains the literal '${JOBS_PARAMETER}' ${occurrences} times; ${RECEIVER_FILE} splits the statement on it and needs it exactly once. ${UPGRADE}`,
  );
  const otherParameters = text.split(JOBS_PARAMETER).join('').match(/\$\d+/g) ?? [];
  assert.deepEqual(
    otherParameters,
    [],
    `${PLANS_FILE}: ${insertJobsCall} takes parameters besides '${JOBS_PARAMETER}' (${otherParameters.join(', ')}); ${RECEIVER_FILE} passes only the jobs, inlined in the receiver's statement. ${UPGRADE}`,
  );
});

test('its jobs are read with the fields the receiver writes, data and singletonKey', async () => {
  const JOBS_PARAMETER = await jobsParameter();
  const text = receiverInsert(await loadPlans());
  const recordset = new RegExp(`json_to_recordset\\(${JOBS_PARAMETER.replace(/[$()*+.?[\\\]^{|}]/g, '\\$&')}\\)\\s+as\\s+x\\s*\\(([^)]*)\\)`, 'i').exec(
    text,
  )?.[1];
  assert.ok(
    recordset !== undefined,
    `${PLANS_FILE}: ${insertJobsCall} no longer reads its jobs with json_to_recordset(${JOBS_PARAMETER}) as x (…). ${UPGRADE}`,
  );
  for (const [field, type] of [
    ['data', 'jsonb'],
    ['"singletonKey"', 'text'],
  ]) {
    assert.match(
      recordset,
      new RegExp(`(^|,)\\s*${field}\\s+${type}\\s*(,|$)`),
      `${PLANS_FILE}: ${insertJobsCall} no longer reads the job field ${field} as ${type}; src/inbox/sql/store-events.ts builds each job as { data, singletonKey }. ${UPGRADE}`,
    );
  }
});

test('it returns one row per inserted job, which the receiver counts against the events it stored', async () => {
  const text = receiverInsert(await loadPlans());
  assert.match(
    text,
    /\bRETURNING\s+id\s*$/i,
    `${PLANS_FILE}: ${insertJobsCall} no longer ends in RETURNING id; src/inbox/sql/store-events.ts aborts its statement unless (select count(*) from jobs) equals the events stored. ${UPGRADE}`,
  );
  assert.match(
    text,
    /^\s*INSERT INTO /i,
    `${PLANS_FILE}: ${insertJobsCall} is no longer a plain INSERT, which the receiver embeds as a data-modifying WITH step. ${UPGRADE}`,
  );
});

test("the receiver's NOTIFY goes to the channel pg-boss's own insert notifies", async () => {
  const plans = await loadPlans();
  const channel = notifyChannelSqlOf(plans)(SCHEMA);
  const ownNotify = `pg_notify(${channel}, '${WEBHOOKS_QUEUE}')`;
  const notifyingInsert = insertJobsOf(plans)(SCHEMA, { table: TABLE, name: WEBHOOKS_QUEUE, returnId: true, notify: true });
  assert.ok(
    notifyingInsert.includes(ownNotify),
    `${PLANS_FILE}: insertJobs(…, notify: true) no longer sends ${ownNotify}; ${RECEIVER_FILE} sends that NOTIFY itself (notifyChannelSql), so its workers would stop waking on new webhooks. ${UPGRADE}`,
  );
});
