import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';

/**
 * The PostgreSQL cluster's system identifier, as decimal text: chosen by initdb, the same on every
 * physical replica and after a failover (the clusters whose transaction ids carry on one another's),
 * and another one in any other cluster, a logical restore's included. pg_control_system() is
 * readable by any role; it reads the control file, a few hundred bytes.
 */
export async function selectClusterIdentifier(db: Database): Promise<string> {
  const [row] = await db.execute<{ system_identifier: string }>(sql`select system_identifier::text as system_identifier from pg_control_system()`);
  if (!row) throw new Error('pg_control_system() returned no row');
  return row.system_identifier;
}
