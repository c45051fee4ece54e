import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/db/schema.ts', './src/delivery/schema.ts'],
  out: './drizzle',
  // pg-boss owns the `pgboss` schema and migrates it itself; drizzle-kit must never diff it.
  schemaFilter: ['public'],
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://localhost:5432/inbox' },
});
