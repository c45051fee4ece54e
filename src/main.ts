import { readFileSync } from 'node:fs';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { DatabaseUnreachableError } from './db/database-unreachable.ts';
import { EmbeddedDatabaseError } from './db/embedded-error.ts';
import { ConfigError } from './errors.ts';
import { PortUnavailableError, bindPort } from './http/server.ts';
import { createLogger } from './logger.ts';
import { logOutput } from './log-output.ts';
import { withEnvFile } from './config/env-file.ts';
import { loadConfig } from './config/load-config.ts';
import { type RunningService, startService } from './service.ts';

function readConfig() {
  try {
    const readFile = (path: string) => readFileSync(path, 'utf8');
    return loadConfig(withEnvFile(process.env, readFile).env, readFile);
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
  const logger = createLogger(config.logLevel, await logOutput(config.logFormat, process.stdout.isTTY === true));
  if (config.providers.size === 0) {
    logger.warn('no provider is configured: every delivery will get 404. Set WEBHOOK_SECRET_<PROVIDER> or INBOX_CONFIG.');
  }
  // PORT first: one another process holds is said before a database starts or a worker runs.
  const boundPort = await bindPort(config.port, config.host);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (databaseUrl === undefined) {
    embedded = await startEmbeddedPostgres({ baseDir: config.dataDir }).catch(async (error: unknown) => {
      await boundPort.close();
      throw error;
    });
    databaseUrl = embedded.url;
    const { dataDir, port, url, logFile, relocatedTo, startedHere } = embedded;
    logger.warn(
      { dataDir, port, url, logFile, ...(relocatedTo && { relocatedTo }), ...(!startedHere && { alreadyRunning: true }) },
      'DATABASE_URL is not set: using an EMBEDDED PostgreSQL for development (psql it at `url`). Set DATABASE_URL in production.',
    );
  }
  let service: RunningService;
  try {
    service = await startService({ config, databaseUrl, logger, boundPort });
  } catch (error) {
    // The cluster runs detached: a failed start must not leave it behind.
    await embedded?.stop().catch(() => {});
    await boundPort.close();
    throw error;
  }

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
  // The embedded cluster is stopped after the drain: in-flight requests keep their database.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  // A port taken, a development database that cannot start, or a database that cannot be reached,
  // is explained in its message; a stack would bury it. Anything else is a bug and keeps its stack.
  const explained = error instanceof EmbeddedDatabaseError || error instanceof DatabaseUnreachableError || error instanceof PortUnavailableError;
  console.error(explained ? `webhook-inbox: ${error.message}` : error);
  process.exit(1);
});
