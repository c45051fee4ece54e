import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PgBoss } from 'pg-boss';
import { ensureDeliveriesQueue } from '../../src/delivery/deliveries-queue.ts';
import { useTestDatabase } from '../support/database.ts';
import { testWorkerConfig } from '../support/config.ts';
import { setup } from '../support/setup.ts';
import { newDestinationSecret } from '../delivery/support/lanes.ts';
import { runInboxctl } from './run-inboxctl.ts';

// `inboxctl lanes retry | skip | enable` on lanes written straight into the tables: a disabled
// destination `orders` with one parked lane (stripe:ch_1, two events, none delivered), one
// lane behind (stripe:ch_2) and one caught up (stripe:ch_3, both events delivered). No service
// runs, so nothing but inboxctl changes them.

const database = useTestDatabase();
let env: Record<string, string>;

setup(async () => {
  env = {
    DATABASE_URL: database.url,
    WEBHOOK_SECRET_STRIPE: 'whsec_cli_lanes',
    DESTINATION_URL_ORDERS: 'http://127.0.0.1:9/hooks',
    DESTINATION_SECRET_ORDERS: newDestinationSecret(),
  };
  // The service creates the deliveries queue at start when a destination is configured; none runs here.
  const boss = new PgBoss({ connectionString: database.url, max: 1, supervise: false, schedule: false, migrate: false });
  await boss.start();
  await ensureDeliveriesQueue(boss, testWorkerConfig);
  await boss.stop({ graceful: false, close: true });
  const sql = database.sql;
  for (const [chargeId, parked, delivered] of [
    ['ch_1', true, 0],
    ['ch_2', false, 0],
    ['ch_3', false, 2],
  ] as const) {
    const [payment] =
      await sql`insert into payments (provider, gateway_charge_id, status, event_sequence) values ('stripe', ${chargeId}, 'paid', 2) returning id`;
    for (const sequence of [1, 2]) {
      await sql`insert into payment_events (payment_id, sequence, provider, gateway_charge_id, status, amount_refunded, occurred_at, cause_inbox_id, cause_event_id, cause_event_type)
        values (${payment!.id}, ${sequence}, 'stripe', ${chargeId}, 'paid', 0, now(), ${sequence}, ${`evt_${chargeId}_${sequence}`}, 'charge.succeeded')`;
    }
    await sql`insert into delivery_lanes (destination, payment_id, delivered_sequence, attempts, parked_at, parked_reason, last_error)
      values ('orders', ${payment!.id}, ${delivered}, ${parked ? 8 : 0}, ${parked ? sql`now()` : null}, ${parked ? 'max attempts' : null}, ${parked ? 'HTTP 500: consumer says no' : null})`;
  }
  await sql`insert into delivery_destinations (name, disabled_at, disabled_reason) values ('orders', now(), 'HTTP 410 Gone')`;
});

/** Everything a lane action may change: the lanes, the destination, the delivery jobs. */
const snapshot = async () => ({
  lanes: await database.sql`select * from delivery_lanes order by payment_id`,
  destinations: await database.sql`select * from delivery_destinations order by name`,
  jobs: (await database.sql`select count(*)::int as n from pgboss.job`)[0]!.n,
});

describe('inboxctl lanes retry | skip | enable --dry-run', () => {
  // Found by a probe: the README promised --dry-run for everything that changes data; these had none.
  const dryRuns: Array<[args: string[], says: RegExp]> = [
    [
      ['lanes', 'retry', 'orders', 'stripe:ch_1', '--dry-run'],
      /^orders stripe:ch_1: would be unparked, attempts from zero, a run queued now \(from event 1\)\.$/m,
    ],
    [
      ['lanes', 'skip', 'orders', 'stripe:ch_1', '--reason', 'order deleted', '--dry-run'],
      /^orders stripe:ch_1: event 1 \([0-9a-f-]{36}\) would be skipped \("order deleted"\), the lane unparked and its later events queued\.$/m,
    ],
    [['lanes', 'enable', 'orders', '--dry-run'], /^orders: would be enabled; 1 lane with events left would be queued\.$/m],
  ];
  for (const [args, says] of dryRuns) {
    test(`${args.slice(1).join(' ')}: says what it would do, changes nothing`, async () => {
      const before = await snapshot();
      const run = await runInboxctl(args, env);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.out, says);
      assert.match(run.out, /^Dry run: nothing changed\.$/m);
      assert.deepEqual(await snapshot(), before);
      const json = await runInboxctl([...args, '--json'], env);
      assert.equal(json.code, 0, json.stderr);
      assert.equal(json.json().dryRun, true);
      assert.deepEqual(await snapshot(), before);
    });
  }

  // Found by a probe: they said "a run is queued now" / "its later events queued" and nothing more,
  // while nothing is sent to a disabled destination until `lanes enable`.
  test('retry and skip of a lane whose destination is disabled say that nothing is sent until lanes enable', async () => {
    const held = 'The destination is DISABLED (HTTP 410 Gone): nothing is sent to it until `inboxctl lanes enable orders`.';
    for (const args of [
      ['lanes', 'retry', 'orders', 'stripe:ch_1', '--dry-run'],
      ['lanes', 'skip', 'orders', 'stripe:ch_1', '--reason', 'x', '--dry-run'],
    ]) {
      const run = await runInboxctl(args, env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.out.split('\n')[1], held, args.join(' '));
      const json = await runInboxctl([...args, '--json'], env);
      assert.equal(json.json().destinationDisabled, true, args.join(' '));
    }
  });

  test('a dry skip of a lane that is not parked is refused as the real one is (exit 2)', async () => {
    const run = await runInboxctl(['lanes', 'skip', 'orders', 'stripe:ch_2', '--reason', 'x', '--dry-run'], env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /refused, nothing changed/);
  });
});

describe('inboxctl lanes, listing', () => {
  // Found by a probe: with the destination gone from the environment (removed, or a shell without
  // its variables), the parked lane was listed and the exit code was 0.
  test('a parked lane of a destination not configured here is listed and exit 1, text and --json', async () => {
    const elsewhere = {
      DATABASE_URL: database.url,
      WEBHOOK_SECRET_STRIPE: 'whsec_cli_lanes',
      DESTINATION_URL_BILLING: 'http://127.0.0.1:9/hooks',
      DESTINATION_SECRET_BILLING: newDestinationSecret(),
    };
    for (const args of [['lanes', '--parked'], ['lanes']]) {
      const run = await runInboxctl(args, elsewhere);
      assert.match(run.out, /^PARKED +orders +stripe:ch_1 /m, args.join(' '));
      assert.equal(run.code, 1, args.join(' '));
    }
    const json = await runInboxctl(['lanes', '--parked', '--json'], elsewhere);
    assert.equal(json.code, 1, json.stderr);
    assert.ok((json.json().lanes as { chargeId: string }[]).some((lane) => lane.chargeId === 'ch_1'));
  });

  // Found by a probe: "(first 2; --limit shows more)" under exactly two lanes, with nothing more to show.
  test('says --limit shows more only when there are more lanes than listed', async () => {
    const all = await runInboxctl(['lanes', '--limit', '2'], env);
    assert.match(all.out, /^PARKED +orders +stripe:ch_1 /m);
    assert.match(all.out, / orders +stripe:ch_2 /m);
    assert.doesNotMatch(all.out, /--limit shows more/);
    const cut = await runInboxctl(['lanes', '--limit', '1'], env);
    assert.match(cut.out, /^\(first 1; --limit shows more\)$/m);
    assert.doesNotMatch(cut.out, /stripe:ch_2/);
  });

  // Found by a probe: --json listed the first --limit lanes and nothing said more were left out,
  // so a script could not tell a cut list from a whole one.
  test('--json says whether there are more lanes than listed', async () => {
    const all = await runInboxctl(['lanes', '--limit', '2', '--json'], env);
    assert.deepEqual({ lanes: all.json().lanes.length, moreLanes: all.json().moreLanes }, { lanes: 2, moreLanes: false });
    const cut = await runInboxctl(['lanes', '--limit', '1', '--json'], env);
    assert.deepEqual({ lanes: cut.json().lanes.length, moreLanes: cut.json().moreLanes }, { lanes: 1, moreLanes: true });
  });

  // Found by a probe: the lane behind of the disabled destination was listed as "sending"; nothing
  // is sent to a disabled destination until `lanes enable`.
  test('a lane of a disabled destination is held, not sending', async () => {
    const run = await runInboxctl(['lanes'], env);
    assert.match(run.out, /^held +orders +stripe:ch_2 +0\/2 +0 +until `lanes enable` /m);
    assert.doesNotMatch(run.out, /^sending/m);
  });
});

describe('inboxctl lanes retry | skip | enable without their arguments', () => {
  // Found by a probe: `lanes retry` said "the destination is empty; give it a value." for an argument not given at all.
  const cases: Array<[args: string[], says: string]> = [
    [['lanes', 'retry'], 'inboxctl: lanes retry needs a destination and a payment: inboxctl lanes retry <destination> <provider>:<charge id>.\n'],
    [
      ['lanes', 'skip', 'orders', '--reason', 'x'],
      'inboxctl: lanes skip needs a destination and a payment: inboxctl lanes skip <destination> <provider>:<charge id>.\n',
    ],
    [['lanes', 'enable'], 'inboxctl: lanes enable needs a destination: inboxctl lanes enable <destination>.\n'],
  ];
  for (const [args, says] of cases) {
    test(`${args.join(' ')}: exit 2 saying what is missing`, async () => {
      const run = await runInboxctl(args, env);
      assert.equal(run.code, 2);
      assert.equal(run.stderr, says);
    });
  }
  test('an empty one is still called empty', async () => {
    const run = await runInboxctl(['lanes', 'retry', '', 'stripe:ch_1'], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /the destination is empty/);
  });
});

describe('inboxctl lanes retry | skip, for real', () => {
  // Found by a probe: "(from event 3)" for a payment of two events, both delivered.
  test('retry of a lane that is caught up says so, not "from event 3" of two', async () => {
    const run = await runInboxctl(['lanes', 'retry', 'orders', 'stripe:ch_3'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.out, 'orders stripe:ch_3: not parked, attempts from zero, a run is queued now (caught up, 2/2 delivered: nothing to send).\n');
  });

  // Found by a probe: --json printed nothing on stdout for a lane that does not exist, where
  // `show --json` prints null for an event that does not.
  test('--json for a lane that does not exist prints null, exit 1 with the reason on stderr', async () => {
    for (const args of [
      ['lanes', 'retry', 'orders', 'stripe:ch_none', '--json'],
      ['lanes', 'skip', 'orders', 'stripe:ch_none', '--reason', 'x', '--json'],
    ]) {
      const run = await runInboxctl(args, env);
      assert.equal(run.code, 1, args.join(' '));
      assert.equal(run.json(), null, args.join(' '));
      assert.match(run.stderr, /ch_none/, args.join(' '));
    }
  });
});

describe('inboxctl lanes skip | enable, for real', () => {
  // Found by a probe: skip without --reason said "--reason is empty; give it a value" (it was not given at all).
  test('skip without --reason says --reason is required; an empty one that it is empty', async () => {
    const missing = await runInboxctl(['lanes', 'skip', 'orders', 'stripe:ch_1'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^inboxctl: skip needs --reason <text>: why the event is given up \(it is recorded on the lane\)\.\n$/);
    const empty = await runInboxctl(['lanes', 'skip', 'orders', 'stripe:ch_1', '--reason', ' '], env);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--reason is empty/);
  });

  // Found by a probe: "1 lanes with events left are queued."
  test('enable takes the destination back and queues its one lane behind, in the singular', async () => {
    const before = await snapshot();
    const run = await runInboxctl(['lanes', 'enable', 'orders'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.out, 'orders: enabled; 1 lane with events left is queued.\n');
    const after = await snapshot();
    assert.equal(after.destinations[0]!.disabled_at, null);
    assert.equal(after.jobs, before.jobs + 1, 'one delivery job: the dry runs above changed nothing that this does');
  });
});
