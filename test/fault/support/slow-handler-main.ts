/**
 * TEST-ONLY ENTRY — the real service (startService, as src/main.ts runs it) whose payments
 * handler, after applying an event inside the job's transaction, holds that transaction open for
 * SLOW_HANDLER_MS and says so on stderr ("slow handler holding <event id>"). A test kills the
 * process -9 while it holds: the effect is written but not committed, which is exactly "a worker
 * died mid-job". It exists only through ServiceOptions.handlers, set here.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../../src/config/load-config.ts';
import { createLogger } from '../../../src/logger.ts';
import { type EventHandler, createHandlerRegistry } from '../../../src/processing/handlers.ts';
import { builtInHandlers } from '../../support/handlers.ts';
import { startService } from '../../../src/service.ts';

// Far longer than any test waits: the effect must still be uncommitted when the kill comes, even
// on a machine so loaded that starting this process takes a minute.
const holdMs = Number(process.env.SLOW_HANDLER_MS ?? 600_000);

const slow = (handler: EventHandler): EventHandler => ({
  ...handler,
  async apply(tx, events) {
    const outcomes = await handler.apply(tx, events);
    for (const { event } of events) process.stderr.write(`slow handler holding ${event.stored.eventId}\n`);
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    return outcomes;
  },
});

const config = loadConfig(process.env, (path) => readFileSync(path, 'utf8'));
const service = await startService({
  config,
  databaseUrl: config.databaseUrl!,
  logger: createLogger(config.logLevel),
  handlers: createHandlerRegistry(builtInHandlers.map(slow)),
});
process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));
