import type { DriverDefinition } from './types.ts';
import { stripeDriver } from './stripe.ts';

/**
 * Every built-in driver by name. A new gateway = one file in this folder + one line here + its
 * vector tests. `WEBHOOK_SECRET_<NAME>` enables the provider <name> with the driver of that name.
 */
export const builtInDrivers: Readonly<Record<string, DriverDefinition>> = {
  stripe: stripeDriver,
};
