/**
 * An outside probe made processing fail with a database error and found the whole drizzle error on
 * the inbox row: "Failed query: <the statement> params: <every parameter>", the parameters being
 * payload values (a customer's email). The logs stripped them; the row did not, so `inboxctl
 * show`, `inboxctl stats`, the dashboard and the pg-boss job output showed them. What failed is
 * kept (class, SQLSTATE, message, the names PostgreSQL gives, the statement's target); no value.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { createLogger } from '../../src/logger.ts';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { useTestDatabase } from '../support/database.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { useService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { SECRET, type InboxState, waitUntilSettled } from './harness.ts';

// Values only the payloads carry: the email a unique index refuses (PostgreSQL quotes it in
// `detail`, drizzle in its message's params), an age PostgreSQL cannot read as an integer (it
// quotes that one in its message), and an email the application's own trigger refuses with a
// RAISE whose message formats it in (P0001: the text is the function author's, values and all).
const EMAIL = 'pii-canary-5e1d@example.com';
const AGE = 'age-canary-91c2';
const BLOCKED_EMAIL = 'raise-canary-3b7e@blocked.example';
const CANARIES = [EMAIL, AGE, BLOCKED_EMAIL];

const database = useTestDatabase();
const { lines, destination } = logLineCapture();

interface Customer {
  id: string;
  email: string;
  metadata?: { age?: string };
}

// A handler as an application writes one: the customer into its own table, through the batch's transaction.
const crmCustomers: EventHandler = {
  name: 'crm-customers',
  kinds: ['stripe:customer.created'],
  async apply(tx, events) {
    for (const { event } of events) {
      const customer = (event.stored.payload as { data: { object: Customer } }).data.object;
      await tx.execute(
        sql`insert into crm_customers (stripe_id, email, age) values (${customer.id}, ${customer.email}, ${customer.metadata?.age ?? null}::int)`,
      );
    }
    return events.map(() => ({ outcome: 'processed' as const }));
  },
};

setup(() =>
  database.sql.unsafe(`
    create table crm_customers (stripe_id text primary key, email text not null constraint crm_customers_email_key unique, age int);
    create function crm_refuse_blocked() returns trigger language plpgsql as $$
    begin
      if new.email like '%@blocked.example' then
        raise exception 'customer % has the blocked email %', new.stripe_id, new.email;
      end if;
      return new;
    end $$;
    create trigger crm_refuse_blocked before insert on crm_customers for each row execute function crm_refuse_blocked();`),
);
const service = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET, WORKER_MAX_ATTEMPTS: '2', INBOX_DASHBOARD: 'on' },
  logger: createLogger('debug', destination),
  handlers: createHandlerRegistry([crmCustomers]),
});

async function postCustomer(eventId: string, customer: Customer): Promise<void> {
  const body = JSON.stringify({
    id: eventId,
    object: 'event',
    type: 'customer.created',
    created: Math.floor(Date.now() / 1000),
    data: { object: { object: 'customer', ...customer } },
  });
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
}

function assertNoPayloadValue(text: string, where: string): void {
  for (const canary of CANARIES) assert.ok(!text.includes(canary), `${where} carries the payload value ${canary}:\n${text}`);
}

describe('a database error in processing: what the row and every face show says what failed, never a payload value', () => {
  let duplicate: InboxState;
  let unreadable: InboxState;
  let raised: InboxState;

  before(async () => {
    await postCustomer('evt_crm_first', { id: 'cus_crm_1', email: EMAIL });
    assert.equal((await waitUntilSettled(database.sql, ['evt_crm_first']))[0]!.status, 'processed');
    await postCustomer('evt_crm_same_email', { id: 'cus_crm_2', email: EMAIL });
    await postCustomer('evt_crm_age', { id: 'cus_crm_3', email: 'someone-else@example.com', metadata: { age: AGE } });
    await postCustomer('evt_crm_blocked', { id: 'cus_crm_4', email: BLOCKED_EMAIL });
    const rows = await waitUntilSettled(database.sql, ['evt_crm_same_email', 'evt_crm_age', 'evt_crm_blocked'], 30_000);
    [duplicate, unreadable, raised] = [rows[0]!, rows[1]!, rows[2]!];
  });

  test('last_error names the class, SQLSTATE, message, constraint, table and statement; not the statement text or its parameters', () => {
    assert.deepEqual([duplicate.status, unreadable.status], ['failed', 'failed']);
    assert.equal(
      duplicate.lastError,
      'PostgresError: duplicate key value violates unique constraint "crm_customers_email_key" (SQLSTATE 23505; table crm_customers, constraint crm_customers_email_key; in insert into crm_customers)',
    );
    assert.equal(unreadable.lastError, 'PostgresError: invalid input syntax for type integer: "…" (SQLSTATE 22P02; in insert into crm_customers)');
  });

  test("a RAISE in the application's trigger: last_error names the function and line that raised, not the text it formatted", () => {
    assert.equal(raised.status, 'failed');
    assert.equal(
      raised.lastError,
      'PostgresError: a database function raised this error; its text is not shown, as it may quote the values it was given (SQLSTATE P0001; raised at crm_refuse_blocked() line 4; in insert into crm_customers)',
    );
  });

  test("the pg-boss jobs of both events (each attempt's output, the dead letter) carry no payload value", async () => {
    const jobs = await database.sql`
      select name, state, output from pgboss.job where (data->>'inboxId')::bigint = any(${[duplicate.id, unreadable.id, raised.id]}::bigint[])`;
    assert.deepEqual(new Set(jobs.map((job) => job.name)), new Set(['webhooks', 'webhooks-dead-letter']));
    const failed = jobs.filter((job) => job.state === 'failed');
    assert.deepEqual(failed.map((job) => job.output.error).sort(), [duplicate.lastError, unreadable.lastError, raised.lastError].sort());
    assertNoPayloadValue(JSON.stringify(jobs.map((job) => job.output)), 'a job output');
  });

  test('inboxctl show and stats say the same, without the values', async () => {
    const env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
    for (const row of [duplicate, unreadable, raised]) {
      const show = await runInboxctl(['show', String(row.id)], env);
      assert.equal(show.code, 0, show.stderr);
      // The payload is printed below, as sent: the last error line is what must not repeat it.
      const lastError = show.out.split('\n').find((line) => line.startsWith('  last error'));
      assert.equal(lastError, `  last error   ${row.lastError}`);
    }
    const stats = await runInboxctl(['stats', '--json'], env);
    assert.equal(stats.code, 1, stats.stderr);
    assertNoPayloadValue(JSON.stringify(stats.json().topErrors), 'inboxctl stats --json topErrors');
  });

  test("the dashboard's failed list and event pages show the error, not the values beside it", async () => {
    const overview = await (await fetch(`${service.baseUrl}/dashboard`)).text();
    assert.match(overview, /SQLSTATE 23505/);
    assertNoPayloadValue(overview, 'the dashboard overview');
    for (const row of [duplicate, unreadable, raised]) {
      const page = await (await fetch(`${service.baseUrl}/dashboard/events/${row.id}`)).text();
      const lastError = /<dt>last error<\/dt><dd class="error-text">([^<]*)<\/dd>/.exec(page)?.[1];
      assert.ok(lastError?.includes('SQLSTATE'), page);
      assertNoPayloadValue(lastError!, `the event page of ${row.eventId}`);
    }
  });

  test('the log lines about the failures say the same, without the values', () => {
    const failures = lines.filter((line) => /processing (attempt )?failed/.test(line));
    assert.ok(failures.length >= 6, `two attempts each:\n${lines.join('\n')}`);
    assertNoPayloadValue(lines.join('\n'), 'a log line');
  });
});
