/**
 * The purge-invariance property (purge-invariance.test.ts) at full strength for the system tier:
 * 500 random histories, about four minutes on a busy two-core machine, where `npm test` runs 60.
 */
process.env.PURGE_INVARIANCE_RUNS ??= '500';
await import('./purge-invariance.test.ts');
