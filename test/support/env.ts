/** Set by test/run.ts: a server where this test file may create its own databases. */
export function adminDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the suite with `npm test` (test/run.ts prepares the database).');
  return url;
}

/**
 * The migrated template every test file clones, named by test/run.ts for its own run
 * (TEST_TEMPLATE_DATABASE): two runs against one server (TEST_DATABASE_URL) must not drop each
 * other's template.
 */
export function templateDatabase(): string {
  return process.env.TEST_TEMPLATE_DATABASE ?? 'inbox_test_template';
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
