import type { DestinationStream } from 'pino';
import { ConfigError } from './errors.ts';

/**
 * Where the service's log lines go, as LOG_FORMAT says: `json` (pino's own lines on stdout, what
 * log shippers read), `pretty` (pino-pretty: one coloured line per entry, for a developer's
 * terminal), unset: pretty when stdout is a terminal and pino-pretty is installed, else JSON.
 *
 * pino-pretty is a devDependency: `npm install` brings it, a production install
 * (`npm ci --omit=dev`, the Docker image) does not, so there an unset LOG_FORMAT is JSON even on a
 * terminal (`docker run -it`), and LOG_FORMAT=pretty is refused in one line rather than guessed.
 */
export async function logOutput(format: 'json' | 'pretty' | undefined, stdoutIsTerminal: boolean): Promise<DestinationStream | undefined> {
  if (format === 'json' || (format === undefined && !stdoutIsTerminal)) return undefined;
  const pretty = await import('pino-pretty').catch(() => undefined);
  if (pretty) {
    // Synchronous like pino's own stdout: the line before a process.exit is not lost.
    return pretty.default({ sync: true, translateTime: 'UTC:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  }
  if (format === undefined) return undefined;
  throw new ConfigError([
    'LOG_FORMAT: "pretty" needs pino-pretty, a devDependency this install left out (npm ci --omit=dev): set LOG_FORMAT=json, or install the devDependencies',
  ]);
}
