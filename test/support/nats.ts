import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { type NatsConnection, connect } from '@nats-io/transport-node';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

/** The machine's NATS with JetStream; TEST_NATS_HOST:PORT elsewhere. */
export const NATS_HOST = process.env.TEST_NATS_HOST ?? '127.0.0.1:4222';

/** Why this machine cannot run the NATS tests (no server, or one without JetStream), or undefined. */
export async function natsUnavailable(host = NATS_HOST): Promise<string | undefined> {
  let connection: NatsConnection | undefined;
  try {
    connection = await connect({ servers: host, timeout: 3_000, reconnect: false });
    await (await jetstreamManager(connection)).getAccountInfo();
    return undefined;
  } catch (error) {
    return `no NATS with JetStream at ${host} (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await connection?.close();
  }
}

export interface ScratchStream {
  /** The stream's name, and the subject prefix it captures (`<prefix>.>`). */
  name: string;
  subjectPrefix: string;
  manager: JetStreamManager;
  drop(): Promise<void>;
}

/** A stream of the test file's own on the shared server, capturing a subject prefix nobody else uses. */
export async function createScratchStream(label: string, host = NATS_HOST, create = true): Promise<ScratchStream> {
  const suffix = randomBytes(4).toString('hex');
  const connection = await connect({ servers: host, reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  const manager = await jetstreamManager(connection);
  const stream = { name: `TEST_${label.toUpperCase().replaceAll('-', '_')}_${suffix}`, subjectPrefix: `test-${label}-${suffix}` };
  if (create) await manager.streams.add({ name: stream.name, subjects: [`${stream.subjectPrefix}.>`] });
  return {
    ...stream,
    manager,
    async drop() {
      await manager.streams.delete(stream.name).catch(() => {});
      await connection.close();
    },
  };
}

export interface PrivateNatsServer {
  host: string;
  /** SIGKILL: the server dies without a word to its clients. */
  kill(): Promise<void>;
  /** Starts it again on the same port and store: JetStream recovers its streams from disk. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Why no private nats-server can be started here (the binary is missing), or undefined. */
export function privateNatsServerUnavailable(): string | undefined {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore', timeout: 10_000 });
    return undefined;
  } catch {
    return 'no nats-server binary on the PATH (the restart test runs a server of its own to kill)';
  }
}

/**
 * A nats-server of the test's own (JetStream, a store in a temporary folder, a port of its own),
 * so a test can kill and restart a real broker without touching the machine's shared one.
 */
export async function startPrivateNatsServer(): Promise<PrivateNatsServer> {
  const port = await freePort();
  const store = await mkdtemp(path.join(tmpdir(), 'nats-test-'));
  const host = `127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const server: PrivateNatsServer = {
    host,
    async start() {
      child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
      exited = new Promise((resolve) => child!.once('exit', () => resolve()));
      await waitFor(async () => (await natsUnavailable(host)) === undefined, {
        message: `nats-server on ${host} to serve JetStream`,
        timeoutMs: 30_000,
        intervalMs: 100,
      });
    },
    async kill() {
      child?.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child?.kill('SIGTERM');
      await exited;
      await rm(store, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
