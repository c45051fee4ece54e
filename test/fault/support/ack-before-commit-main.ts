/**
 * TEST-ONLY ENTRY — a deliberately broken service, the control for the kill test. It is the real
 * service (startService, as src/main.ts runs it) except that its ingestor answers at once and
 * writes the event behind the answer, from an in-memory buffer flushed every FLUSH_INTERVAL_MS:
 * the "ack, then persist" design the inbox exists to avoid. A kill -9 loses whatever the buffer
 * held, and the kill test's checker must report that as lost > 0. Nothing in src/ selects this
 * behaviour: it exists only through ServiceOptions.wrapIngestor, set here.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../../src/config/load-config.ts';
import type { Ingestor } from '../../../src/inbox/group-commit.ts';
import type { IncomingEvent } from '../../../src/inbox/incoming-event.ts';
import { createLogger } from '../../../src/logger.ts';
import { startService } from '../../../src/service.ts';

const FLUSH_INTERVAL_MS = 100;

const config = loadConfig(process.env, (path) => readFileSync(path, 'utf8'));
const logger = createLogger(config.logLevel);
const buffer: IncomingEvent[] = [];
let committing: Ingestor | undefined;
const flush = () => Promise.allSettled(buffer.splice(0).map((event) => committing!.ingest(event)));

const service = await startService({
  config,
  databaseUrl: config.databaseUrl!,
  logger,
  wrapIngestor: (real) => {
    committing = real;
    return {
      async ingest(event) {
        buffer.push(event);
        return { kind: 'duplicate' };
      },
    };
  },
});
setInterval(() => void flush(), FLUSH_INTERVAL_MS);
// A clean stop flushes first, so whatever the control loses, it loses to the kills alone.
process.on('SIGTERM', () => {
  void flush()
    .then(() => service.stop())
    .then(() => process.exit(0));
});
