import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { testWorkerConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';

const database = useTestDatabase();

interface PreparedStatement {
  name: string;
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

/** pg-boss with a pool of one connection, so what its statements left on that connection can be read through it. */
async function bossWithOneConnection(preparedStatements: boolean): Promise<PgBoss> {
  const boss = await startBoss({
    url: database.url,
    role: 'receiver',
    worker: testWorkerConfig,
    poolSize: 1,
    connectTimeoutSeconds: 5,
    logger: createLogger('silent'),
    preparedStatements,
  });
  database.onTeardown(() => boss.stop({ graceful: false, close: true }));
  return boss;
}

async function fetchThreeTimes(boss: PgBoss): Promise<PreparedStatement[]> {
  await boss.send(WEBHOOKS_QUEUE, { inboxId: 1 });
  for (let i = 0; i < 3; i += 1) await boss.fetch(WEBHOOKS_QUEUE, { batchSize: 10 });
  const { rows } = await boss.getDb().executeSql('select name, statement, generic_plans::text, custom_plans::text from pg_prepared_statements');
  return rows as PreparedStatement[];
}

describe("pg-boss's statements, prepared on its own connections", () => {
  test('its fetch is a named statement, planned once and then run on that plan', async () => {
    const boss = await bossWithOneConnection(true);
    const prepared = await fetchThreeTimes(boss);
    const fetch = prepared.filter((s) => /WITH\s+next AS/.test(s.statement) && s.statement.includes(`'${WEBHOOKS_QUEUE}'`));
    assert.equal(fetch.length, 1, `one fetch statement among ${prepared.map((s) => s.name).join(', ')}`);
    assert.match(fetch[0]!.name, /^pgboss_/);
    assert.deepEqual([fetch[0]!.generic_plans, fetch[0]!.custom_plans], ['3', '0'], 'no parameters: one generic plan, run three times');
    assert.ok(
      prepared.every((s) => !/;\s*\S/.test(s.statement)),
      'no text of several statements was prepared',
    );
  });

  test('DATABASE_PREPARED_STATEMENTS=false: nothing is prepared, for a pooler that would not carry it', async () => {
    const boss = await bossWithOneConnection(false);
    assert.deepEqual(await fetchThreeTimes(boss), []);
  });
});
