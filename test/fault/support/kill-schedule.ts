import { distinctChargeEvents } from './deliveries.ts';
import { deliverAll } from './gateway.ts';
import { DeliveryHistory } from './history.ts';
import { freePort } from '../../support/free-port.ts';
import { type ServiceProcess, spawnService } from './service-process.ts';

export interface KillRunOptions {
  /** The entry script: `src/main.ts`, or a test-only variant. */
  entry: string;
  databaseUrl: string;
  secret: string;
  prefix: string;
  deliveries: number;
  /** Kill -9 (and restart) once the gateway has counted this many 200s, for each entry. */
  killAfterAcks: number[];
  env?: Record<string, string>;
}

export interface KillRun {
  history: DeliveryHistory;
  kills: number;
  /** The process left running at the end (the caller stops it). */
  service: ServiceProcess;
}

/**
 * A gateway delivers `deliveries` distinct events, retrying whatever got no 200, while the service
 * is killed -9 after each threshold of acknowledgements and started again on the same port.
 */
export async function deliverThroughKills(options: KillRunOptions): Promise<KillRun> {
  const port = await freePort();
  const start = () =>
    spawnService({
      entry: options.entry,
      port,
      env: { DATABASE_URL: options.databaseUrl, WEBHOOK_SECRET_STRIPE: options.secret, INBOX_ROLE: 'all', ...options.env },
    });
  let service: ServiceProcess = await start();
  const history = new DeliveryHistory();
  const thresholds = [...options.killAfterAcks];
  let acks = 0;
  let kills = 0;
  let restarting: Promise<void> = Promise.resolve();
  const killAndRestart = async () => {
    await service.kill();
    kills += 1;
    service = await start();
  };
  await deliverAll(distinctChargeEvents(options.prefix, options.deliveries), {
    baseUrl: () => service.baseUrl,
    secret: options.secret,
    history,
    concurrency: 32,
    retryDelayMs: 25,
    maxRetryDelayMs: 400,
    giveUpAfterMs: 90_000,
    onAttempt: (outcome) => {
      if (outcome !== 200) return;
      acks += 1;
      // Fired from the ack itself, so the kill lands mid-load however fast the target answers.
      if (thresholds.length > 0 && acks >= thresholds[0]!) {
        thresholds.shift();
        restarting = restarting.then(killAndRestart);
      }
    },
  });
  await restarting;
  return { history, kills, service };
}
