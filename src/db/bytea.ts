import { customType } from 'drizzle-orm/pg-core';

// drizzle-orm has no built-in bytea column; postgres.js already maps bytea <-> Buffer.
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => 'bytea',
});
