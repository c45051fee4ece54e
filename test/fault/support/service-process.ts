import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../support/wait.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface ServiceProcess {
  pid: number;
  port: number;
  baseUrl: string;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: no shutdown hook runs, in-flight transactions die with their connections. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the graceful shutdown. */
  stop(): Promise<void>;
  /** Peak resident memory so far (VmHWM), in bytes. Linux only. */
  peakRssBytes(): number;
  /** The last lines the process printed (for failure messages). */
  recentOutput(): string;
  /** Everything the process printed that contains `text`. */
  linesIncluding(text: string): string[];
}

export interface SpawnServiceOptions {
  /** Relative to the repository; `src/main.ts` is the real entry. */
  entry?: string;
  env: Record<string, string>;
  port: number;
  readyTimeoutMs?: number;
  /** False: return once spawned, without waiting for /readyz (a process expected to be busy or wedged). */
  waitUntilReady?: boolean;
  /** Send the process's output to this file instead of through a pipe (a benchmark keeps the parent idle). */
  outputFile?: string;
  /** Extra node flags (`--cpu-prof`, …). */
  nodeArgs?: string[];
}

/**
 * The service as a real child process (`node src/main.ts`), which a test can kill -9: a crash the
 * in-process service cannot simulate, because the test runner would die with it.
 */
export async function spawnService(options: SpawnServiceOptions): Promise<ServiceProcess> {
  const outputFd = options.outputFile ? openSync(options.outputFile, 'a') : undefined;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.entry ?? 'src/main.ts'], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(options.port),
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: outputFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', outputFd, outputFd],
  });
  if (outputFd !== undefined) closeSync(outputFd);
  const lines: string[] = [];
  const watched: string[] = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    const newLines = text.split('\n').filter((l) => l.length > 0);
    lines.push(...newLines);
    // Head and tail of each line: a pino line starts with its level and ends with its msg.
    watched.push(...newLines.map((l) => (l.length > 400 ? `${l.slice(0, 200)} … ${l.slice(-200)}` : l)));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const service: ServiceProcess = {
    pid: child.pid!,
    port: options.port,
    baseUrl,
    exited,
    async kill() {
      if (!hasExited) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!hasExited) child.kill('SIGTERM');
      await exited;
    },
    peakRssBytes: () => peakRss(child),
    recentOutput: () => (options.outputFile ? readFileSync(options.outputFile, 'utf8').split('\n').slice(-200).join('\n') : lines.join('\n')),
    linesIncluding: (text) => watched.filter((l) => l.includes(text)),
  };
  if (options.waitUntilReady === false) return service;
  try {
    const ready = waitFor(
      async () => {
        const response = await fetch(`${baseUrl}/readyz`);
        return response.status === 200;
      },
      {
        message: `the service (${options.entry ?? 'src/main.ts'}) to be ready on port ${options.port}`,
        timeoutMs: options.readyTimeoutMs ?? 90_000,
        intervalMs: 50,
      },
    );
    const died = exited.then(({ code, signal }) => {
      throw new Error(`it exited during start (code ${code}, signal ${signal})`);
    });
    await Promise.race([ready, died]);
    died.catch(() => {});
  } catch (error) {
    await service.kill();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- output ---\n${service.recentOutput()}`);
  }
  return service;
}

function peakRss(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  if (!match) throw new Error('VmHWM not found in /proc/<pid>/status');
  return Number(match[1]) * 1024;
}

export interface SupervisedService {
  current(): ServiceProcess;
  /** Exits nobody asked for, with the output the process left (an orchestrator would restart it, and so does this). */
  crashes: { at: number; exit: { code: number | null; signal: NodeJS.Signals | null }; output: string }[];
  stop(): Promise<void>;
}

/** Keeps one service process running the way a container orchestrator does: an unexpected exit is recorded and restarted. */
export async function superviseService(start: () => Promise<ServiceProcess>): Promise<SupervisedService> {
  let stopping = false;
  let service = await start();
  const supervised: SupervisedService = {
    current: () => service,
    crashes: [],
    async stop() {
      stopping = true;
      await service.stop();
    },
  };
  const watch = (watched: ServiceProcess) => {
    void watched.exited.then(async (exit) => {
      if (stopping) return;
      supervised.crashes.push({ at: Date.now(), exit, output: watched.recentOutput() });
      // A start fails while the database is still down (migrations need it): keep trying, as an orchestrator does.
      for (;;) {
        try {
          service = await start();
          if (stopping) await service.stop();
          break;
        } catch {
          if (stopping) return;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
      watch(service);
    });
  };
  watch(service);
  return supervised;
}
