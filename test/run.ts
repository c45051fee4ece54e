/**
 * `npm test`: prepares a PostgreSQL (TEST_DATABASE_URL or DATABASE_URL if set, else an embedded
 * cluster in a temporary folder), migrates a template database once, then runs the test files
 * with node's test runner. Each file clones the template into a database of its own.
 *
 * Two tiers (docs/testing.md): `npm test` runs the fast tier, every `*.test.ts` file but the
 * system tier's; `npm run test:system` (`--system`) runs the system tier, the files named
 * `*.system.test.ts` or under test/system/ (real service processes killed mid-work, outages, a
 * fresh clone, browsers, poolers, long properties). Files named on the command line run whatever
 * their tier. Every run ends with its ten slowest files; `--coverage` or TEST_COVERAGE=1 (`npm run test:coverage`)
 * adds node's line coverage of src/.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { applyMigrations } from '../src/db/migrate.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { databaseUrl } from './support/env.ts';
import { prepareTemplate } from './support/template.ts';

const flags = ['--system', '--coverage'];

function isSystemTest(file: string): boolean {
  return file.endsWith('.system.test.ts') || file.startsWith(path.join('test', 'system') + path.sep);
}

async function testFiles(args: string[]): Promise<string[]> {
  const system = args.includes('--system');
  const named = args.filter((arg) => !flags.includes(arg));
  if (named.length > 0) return named;
  const entries = await readdir('test', { recursive: true });
  return entries
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.join('test', f))
    .filter((f) => isSystemTest(f) === system)
    .sort();
}

/**
 * Three files at a time for the fast tier (they wait on PostgreSQL more than on the CPU: 237–251 s
 * against 283 s with two, on two cores), two when a system test is among them (each starts
 * services, clusters or browsers of its own).
 */
function defaultConcurrency(files: string[]): number {
  return files.some(isSystemTest) ? 2 : 3;
}

/** spec for people, and the slowest files (and coverage total) at the end of the same output. */
function reporterFlags(coverage: boolean): string[] {
  const reporters = [
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.resolve('test/support/slowest-files-reporter.ts')}`,
    '--test-reporter-destination=stdout',
  ];
  if (!coverage) return reporters;
  return [...reporters, '--experimental-test-coverage', '--test-coverage-include=src/**'];
}

/** On a server of yours the template would outlive the run (an embedded cluster goes with its folder). */
async function dropTemplate(adminUrl: string, template: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${template}" with (force)`);
  } catch (error) {
    console.error(`# could not drop the template database ${template}: ${(error as Error).message}`);
  } finally {
    await admin.end();
  }
}

async function main(): Promise<number> {
  const external = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let embedded: EmbeddedDatabase | undefined;
  let scratch: string | undefined;
  let adminUrl: string;
  if (external) {
    adminUrl = external;
    console.log(`# tests use the PostgreSQL at ${new URL(external).host} (from ${process.env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL' : 'DATABASE_URL'})`);
  } else {
    scratch = await mkdtemp(path.join(tmpdir(), 'inbox-test-db-'));
    // As root, the cluster runs as the `postgres` user, who must be able to enter this folder; in a
    // checkout that user cannot reach, the binaries are copied into it (relocationDir).
    await chmod(scratch, 0o755);
    embedded = await startEmbeddedPostgres({ baseDir: scratch, preferredPort: 0, relocationDir: scratch });
    adminUrl = embedded.url;
    console.log(`# tests use an embedded PostgreSQL on port ${embedded.port} (set TEST_DATABASE_URL to use a server)`);
  }
  // This run's own template: another run against the same server (TEST_DATABASE_URL) keeps its own.
  const template = `inbox_test_template_${process.pid}_${Math.random().toString(16).slice(2, 8)}`;
  try {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${template}"`);
    await admin.end();
    const templateUrl = databaseUrl(adminUrl, template);
    await applyMigrations(templateUrl);
    await prepareTemplate(templateUrl);

    const files = await testFiles(process.argv.slice(2));
    // Tests build their configuration explicitly; a DATABASE_URL in the environment must not leak into it.
    const { DATABASE_URL: _ignored, ...env } = process.env;
    const child = spawn(
      process.execPath,
      [
        '--test',
        `--test-concurrency=${process.env.TEST_CONCURRENCY ?? defaultConcurrency(files)}`,
        // A hang is a failure with a name, not a run that never ends (a CI run once waited 90
        // minutes on one statement lost in PgBouncer): no test or hook runs past this.
        `--test-timeout=${Number(process.env.TEST_TIMEOUT_SECONDS ?? 600) * 1000}`,
        ...reporterFlags(process.argv.includes('--coverage') || process.env.TEST_COVERAGE === '1'),
        ...files,
      ],
      {
        stdio: 'inherit',
        env: { ...env, TEST_DATABASE_URL: adminUrl, TEST_TEMPLATE_DATABASE: template },
      },
    );
    // What --test-timeout cannot end: a file whose tests are done but whose process stays up (a
    // handle left open). Past this, the runner is interrupted and lists the files still running.
    // (--test-force-exit would end such a file, but the parent runner then exited before every
    // file had reported: 23 tests and the slowest-files list went missing in a trial run.)
    const runLimitMinutes = Number(process.env.TEST_RUN_TIMEOUT_MINUTES ?? 45);
    let interrupted = false;
    const watchdog = setTimeout(() => {
      interrupted = true;
      console.error(`# the test run passed ${runLimitMinutes} minutes (TEST_RUN_TIMEOUT_MINUTES): interrupting it; the files still running follow`);
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, runLimitMinutes * 60_000);
    const code = await new Promise<number>((resolve) => child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
    clearTimeout(watchdog);
    return interrupted ? Math.max(code, 1) : code;
  } finally {
    if (external) await dropTemplate(external, template);
    await embedded?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

process.exit(await main());
