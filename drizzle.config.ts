import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  // Every module that defines tables: the inbox's own, the payments domain's, the deliveries', the dashboard's, reconciliation's, the gateway accounts' access (refetch).
  schema: [
    './src/db/schema.ts',
    './src/domain/payments/schema.ts',
    './src/delivery/schema.ts',
    './src/dashboard/schema.ts',
    './src/reconciliation/schema.ts',
    './src/refetch/schema.ts',
  ],
  out: './drizzle',
  // pg-boss owns the `pgboss` schema and migrates it itself; drizzle-kit must never diff it.
  schemaFilter: ['public'],
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://localhost:5432/inbox' },
});
