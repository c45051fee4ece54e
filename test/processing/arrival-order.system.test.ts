/**
 * The arrival-order property (arrival-order.test.ts) at full strength for the system tier: 200
 * random histories, where `npm test` runs 50.
 */
process.env.ARRIVAL_ORDER_RUNS ??= '200';
await import('./arrival-order.test.ts');
