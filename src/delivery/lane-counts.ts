import { sql } from 'drizzle-orm';
import type { Database, Transaction } from '../db/client.ts';

export interface DestinationCounts {
  destination: string;
  parkedLanes: number;
  disabled: boolean;
}

/** Parked lanes per destination (a partial index holds only those) and which destinations are disabled. */
export async function countLanesByDestination(db: Database | Transaction): Promise<DestinationCounts[]> {
  const rows = await db.execute<{ destination: string; parked: number; disabled: boolean }>(sql`
    select coalesce(p.destination, d.name) as destination, coalesce(p.parked, 0)::int as parked, coalesce(d.disabled_at is not null, false) as disabled
    from (select destination, count(*) as parked from delivery_lanes where parked_at is not null group by destination) as p
    full join delivery_destinations as d on d.name = p.destination`);
  return rows.map((r) => ({ destination: r.destination, parkedLanes: r.parked, disabled: r.disabled }));
}
