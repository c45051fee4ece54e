/**
 * drizzle wraps every driver error in a DrizzleQueryError whose message is "Failed query: <the
 * statement> params: <every parameter>", with `query` and `params` beside it. An outside probe
 * stopped the database and found the gauge refresher logging exactly that, in `message` and again
 * in `stack`: SQL text and parameters, which the README says a log line never carries.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'drizzle-orm';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describeError } from '../../src/errors.ts';
import { createLogger } from '../../src/logger.ts';
import { connectDatabase } from '../../src/db/client.ts';
import { useTestDatabase } from '../support/database.ts';
import { freePort } from '../support/free-port.ts';
import { logLineCapture } from '../support/log-lines.ts';

const database = useTestDatabase();
const CANARY = 'param-canary-7f3a';

/** What the logger writes for `err`, parsed, and the raw line for greps. */
async function logged(err: unknown): Promise<{ line: string; err: Record<string, unknown> }> {
  const capture = logLineCapture();
  createLogger('info', capture.destination).error({ err }, 'database-derived metrics refresh failed');
  await new Promise((resolve) => setImmediate(resolve));
  const line = capture.lines.at(-1)!;
  return { line, err: (JSON.parse(line) as { err: Record<string, unknown> }).err };
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  assert.fail('the statement did not fail');
}

function assertNoStatement(line: string) {
  assert.doesNotMatch(line, /Failed query|webhook_inbox|select /i, line);
  assert.ok(!line.includes(CANARY), `a parameter reached the log: ${line}`);
}

test('a statement against a stopped database logs as the connection error beneath drizzle: its code and message, never the statement or its parameters', async () => {
  const stopped = connectDatabase({
    url: `postgres://inbox@127.0.0.1:${await freePort()}/inbox`,
    poolSize: 1,
    connectTimeoutSeconds: 2,
    applicationName: 'test',
  });
  database.onTeardown(() => stopped.close());
  const error = await failure(() => stopped.db.execute(sql`select provider, count(*)::int from webhook_inbox where provider = ${CANARY} group by provider`));
  assert.ok(error instanceof DrizzleQueryError, 'drizzle wraps the driver error');

  const { line, err } = await logged(error);
  assertNoStatement(line);
  assert.equal(err.code, 'ECONNREFUSED');
  assert.match(String(err.message), /ECONNREFUSED/);
  assert.notEqual(err.type, 'DrizzleQueryError');
});

test('a statement PostgreSQL refuses logs its SQLSTATE and message; wrapped in another error, or in an AggregateError, still no statement', async () => {
  const pool = database.connect('query-error-logs');
  const error = await failure(() => pool.db.execute(sql`select 1 / 0 from webhook_inbox where provider <> ${CANARY} union all select 1 / 0`));
  assert.ok(error instanceof DrizzleQueryError);

  const direct = await logged(error);
  assertNoStatement(direct.line);
  assert.equal(direct.err.code, '22012');
  assert.equal(direct.err.message, 'division by zero');

  const wrapped = await logged(new Error('the refresh gave up', { cause: error }));
  assertNoStatement(wrapped.line);
  assert.match(String(wrapped.err.message), /the refresh gave up: division by zero/);

  const aggregate = await logged(new AggregateError([error], 'two things failed'));
  assertNoStatement(aggregate.line);
});

test("a function's RAISE, under its own SQLSTATE too, logs and describes without the text it formatted, naming the function and line", async () => {
  const pool = database.connect('query-error-logs-raise');
  await pool.sql.unsafe(`
    create function refuse_value(value text) returns void language plpgsql as $$
    begin
      raise exception 'refused %', value using errcode = 'check_violation';
    end $$`);
  const error = await failure(() => pool.db.execute(sql`select refuse_value(${CANARY})`));

  const { line, err } = await logged(error);
  assertNoStatement(line);
  assert.deepEqual([err.code, err.routine], ['23514', 'exec_stmt_raise']);
  assert.equal(
    describeError(error),
    'PostgresError: a database function raised this error; its text is not shown, as it may quote the values it was given (SQLSTATE 23514; raised at refuse_value(text) line 3)',
  );
});
