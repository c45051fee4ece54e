import postgres from 'postgres';
import { PgBoss } from 'pg-boss';
import { startPrivateCluster } from './test/fault/support/private-cluster.ts';
import { findPgBouncer, startPgBouncer } from './test/support/pgbouncer.ts';
const cluster = await startPrivateCluster();
const bouncer = await startPgBouncer({ binary: findPgBouncer()!, upstream: cluster.url, poolSize: 6 });
const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
try {
  for (const [label, url] of [['direct', cluster.urlFor.bind(cluster)], ['pooler', bouncer.urlFor]] as const) {
    for (let round = 0; round < 3; round++) {
      const db = `race_${label}_${round}`;
      await admin.unsafe(`create database ${db}`);
      const starts = await Promise.allSettled([0, 1].map(async () => { const b = new PgBoss({ connectionString: url(db), max: 2, supervise: false, schedule: false }); b.on('error', () => {}); await b.start(); await b.stop({ graceful: false, close: true }); }));
      console.log(label, round, starts.map(s => s.status === 'fulfilled' ? 'ok' : (s as any).reason.message));
    }
  }
} finally {
  await admin.end();
  await bouncer.stop();
  await cluster.destroy();
}
