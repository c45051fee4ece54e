import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { connectDatabase } from '../../src/db/client.ts';
import { waitFor } from '../support/wait.ts';
import { distinctChargeEvents } from './support/deliveries.ts';
import { deliverAll } from './support/gateway.ts';
import { type Attempt, DeliveryHistory, checkHistory, summarize } from './support/history.ts';
import { countJobs, countUnfinished, readEffects, readStoredState } from './support/inbox-state.ts';
import { startFastSupervisor } from './support/fast-supervisor.ts';
import { freePort } from '../support/free-port.ts';
import { type PrivateCluster, startPrivateCluster } from './support/private-cluster.ts';
import { type SupervisedService, spawnService, superviseService } from './support/service-process.ts';

const SECRET = 'whsec_fault_outage_secret';
const PREFIX = 'evt_outage_';
const DELIVERIES = 600;
const COMMIT_DEADLINE_MS = 2000;
/** What "within the deadline" tolerates on a loaded 2-core machine: the answer, not the commit, is late. */
const ANSWER_SLACK_MS = 1500;
const OUTAGE_MS = 4000;

let cluster: PrivateCluster;
let service: SupervisedService;
let sql: postgres.Sql;
let supervisor: { stop(): Promise<void> } | undefined;

interface OutageRecord {
  /** pg_ctl stop -m immediate had returned: nothing can commit from here… */
  downFrom: number;
  /** …until the restart began. */
  downUntil: number;
  readyzWhileDown: (number | 'network_error')[];
  duringOutage: Attempt[];
}

let outage: OutageRecord;
const history = new DeliveryHistory();

async function readyz(): Promise<number | 'network_error'> {
  try {
    return (await fetch(`${service.current().baseUrl}/readyz`)).status;
  } catch {
    return 'network_error';
  }
}

async function takeDatabaseDown(): Promise<Omit<OutageRecord, 'duringOutage'>> {
  await cluster.stop('immediate');
  const downFrom = Date.now();
  const readyzWhileDown: (number | 'network_error')[] = [];
  try {
    while (Date.now() - downFrom < OUTAGE_MS) {
      readyzWhileDown.push(await readyz());
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await cluster.start();
  }
  return { downFrom, downUntil: Date.now(), readyzWhileDown };
}

before(async () => {
  // A cluster of this test's own: stopping the shared test cluster would fail every other file.
  cluster = await startPrivateCluster();
  sql = postgres(cluster.url, { max: 2, onnotice: () => {} });
  const port = await freePort();
  service = await superviseService(() =>
    spawnService({
      port,
      env: {
        DATABASE_URL: cluster.url,
        WEBHOOK_SECRET_STRIPE: SECRET,
        INBOX_ROLE: 'all',
        COMMIT_DEADLINE_MS: String(COMMIT_DEADLINE_MS),
        DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
        // Jobs active when the database died are retried once they expire (10 s, the least allowed).
        WORKER_EXPIRE_IN_SECONDS: '10',
        WORKER_RETRY_DELAY_SECONDS: '1',
        WORKER_POLLING_INTERVAL_SECONDS: '0.5',
      },
    }),
  );
  supervisor = await startFastSupervisor(cluster.url);
  // The load: a gateway retrying each event until it gets a 200; the database goes down after 150 acks.
  let acks = 0;
  let down: Promise<Omit<OutageRecord, 'duringOutage'>> | undefined;
  await deliverAll(distinctChargeEvents(PREFIX, DELIVERIES), {
    baseUrl: () => service.current().baseUrl,
    secret: SECRET,
    history,
    concurrency: 8,
    retryDelayMs: 50,
    maxRetryDelayMs: 500,
    giveUpAfterMs: 90_000,
    onAttempt: (outcome) => {
      if (outcome === 200 && ++acks === 150) down = takeDatabaseDown();
    },
  });
  if (!down) throw new Error('the load ended before the outage began');
  const record = await down;
  // Attempts that began after the stop and ended before the restart: nothing could have committed them.
  const duringOutage = history.attempts.filter((a) => a.startedAt >= record.downFrom && a.endedAt <= record.downUntil);
  outage = { ...record, duringOutage };
});

after(async () => {
  await supervisor?.stop();
  await sql?.end({ timeout: 5 });
  await service?.stop();
  await cluster?.destroy();
});

function counts(values: unknown[]): Record<string, number> {
  const result: Record<string, number> = {};
  for (const value of values) result[String(value)] = (result[String(value)] ?? 0) + 1;
  return result;
}

test('PostgreSQL stopped (-m immediate) mid-load: no 200 while it is down, and after the restart 0 acknowledged events lost, each processed once', async (t) => {
  t.diagnostic(
    `outage ${outage.downUntil - outage.downFrom} ms: attempts ${JSON.stringify(counts(outage.duringOutage.map((a) => a.outcome)))}, /readyz ${JSON.stringify(counts(outage.readyzWhileDown))}, service crashes ${service.crashes.length}`,
  );
  assert.ok(outage.duringOutage.length > 0, 'deliveries were attempted while the database was down');
  assert.equal(outage.duringOutage.filter((a) => a.outcome === 200).length, 0, 'no 200 while the database was down');
  assert.equal(await readyz(), 200, '/readyz recovers after the restart');

  await waitFor(async () => (await countUnfinished(sql, PREFIX)) === 0, { message: 'every stored event to be processed', timeoutMs: 90_000, intervalMs: 200 });
  const state = { ...(await readStoredState(sql, PREFIX)), effects: await readEffects(sql, PREFIX) };
  const result = checkHistory(history, state, { allowedStatuses: [200, 503], requireProcessedOnce: true });
  t.diagnostic(summarize('postgres outage', result));
  assert.equal(result.acknowledged, DELIVERIES, 'after the restart every event got its 200');
  assert.deepEqual(result.lost, [], 'lost: acknowledged but not stored, or never processed');
  assert.deepEqual(result.duplicated, [], 'duplicated: a second row or a second effect');
  assert.deepEqual(result.unexpected, [], 'unexpected answers (a 500) or rows');
  assert.equal((await countJobs(sql, PREFIX)).rowsWithoutJob, 0);
});

// Until patches/postgres+3.4.9.patch (porsager/postgres#1154, #1208), postgres.js wrote a dead
// transaction's automatic ROLLBACK to its closed socket and the TypeError from that setImmediate
// (`nextWrite`) killed the process: seen here as service crashes, and in the test below at once
// (docs/ARCHITECTURE.md, "Pinned dependencies", says why 3.4.9 patched and not 4.x).
test('PostgreSQL stopped mid-load: the service stays up, answers 503 within the commit deadline and /readyz 503', (t) => {
  for (const crash of service.crashes) {
    const cause = crash.output
      .split('\n')
      .filter((line) => /^\w*Error|^\s+at /.test(line))
      .slice(0, 3)
      .join(' | ');
    t.diagnostic(`crash (exit ${JSON.stringify(crash.exit)}): ${cause || '(no error printed)'}`);
  }
  const slowest = Math.max(0, ...outage.duringOutage.map((a) => a.endedAt - a.startedAt));
  t.diagnostic(`slowest answer while down: ${slowest} ms`);
  assert.equal(service.crashes.length, 0, 'the service did not exit');
  assert.deepEqual(new Set(outage.duringOutage.map((a) => a.outcome)), new Set([503]), 'every delivery attempted while down got a 503');
  assert.ok(slowest <= COMMIT_DEADLINE_MS + ANSWER_SLACK_MS, `each 503 came within the commit deadline (slowest ${slowest} ms)`);
  assert.ok(
    outage.readyzWhileDown.every((status) => status === 503),
    '/readyz answered 503 throughout',
  );
});

test('a transaction whose backend dies mid-statement rejects with CONNECTION_CLOSED, the process lives on, and the next query on the same connection succeeds', async () => {
  // The service's own client; one connection, so the next query must reuse the one that died.
  const database = connectDatabase({ url: cluster.url, poolSize: 1, connectTimeoutSeconds: 1, applicationName: 'outage-victim' });
  try {
    let pid: number | undefined;
    const transaction = database.sql.begin(async (tx) => {
      pid = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid;
      await tx`select pg_sleep(30)`;
    });
    const victim = await waitFor(() => pid, { message: 'the transaction to report its backend', timeoutMs: 10_000, intervalMs: 10 });
    await sql`select pg_terminate_backend(${victim})`;
    // Unpatched, the process died here (porsager/postgres#1154, #1208).
    await assert.rejects(transaction, { code: 'CONNECTION_CLOSED' });
    // The connection comes back clean too: 3.4.9 carried the dead backend's error over to the first
    // query after the reconnect.
    assert.deepEqual([...(await database.sql`select 1 as one`)], [{ one: 1 }]);
  } finally {
    await database.close();
  }
});
