import type { AppConfig } from '../config/load-config.ts';
import { ConfigError } from '../errors.ts';
import type { CliConnection } from './database.ts';
import { CliError, exitCodes } from './exit-codes.ts';

// Configuration, database and operations modules are loaded when a command needs them, so
// `--help` and usage errors answer without loading drizzle, pg-boss and every driver.

/** Where answers and notices go. */
export interface CliOutput {
  write(chunk: string | Uint8Array): unknown;
  /** True once the reader has gone (a closed pipe): nothing written reaches anyone. */
  readonly closed?: boolean;
}

/** Everything a command touches of the outside world, so the entry point alone reads process.*. */
export interface CliRuntime {
  env: Record<string, string | undefined>;
  readFile: (path: string) => string;
  stdout: CliOutput;
  stderr: CliOutput;
  now: () => Date;
  /** Who runs the command (the OS user), for the changes that record who made them. */
  user?: () => string;
}

export interface CommandContext {
  runtime: CliRuntime;
  now: Date;
  /** A line on stdout (the command's answer). */
  print(text: string): void;
  /** A line on stderr (progress and notices, so `--json` output stays clean). */
  notice(text: string): void;
  /** The service's configuration, read the way the service reads it. */
  config(): Promise<AppConfig>;
  /** Runs `work` connected to the service's database; closes everything after. */
  withDatabase<T>(options: { boss: boolean }, work: (connection: CliConnection, config: AppConfig) => Promise<T>): Promise<T>;
}

export function createCommandContext(runtime: CliRuntime): CommandContext {
  let config: AppConfig | undefined;
  const context: CommandContext = {
    runtime,
    now: runtime.now(),
    print: (text) => runtime.stdout.write(`${text}\n`),
    notice: (text) => runtime.stderr.write(`inboxctl: ${text}\n`),
    async config() {
      if (!config) {
        const [{ loadConfig }, { withEnvFile }] = await Promise.all([import('../config/load-config.ts'), import('../config/env-file.ts')]);
        try {
          config = loadConfig(withEnvFile(runtime.env, runtime.readFile).env, runtime.readFile);
        } catch (error) {
          if (error instanceof ConfigError)
            throw new CliError(
              exitCodes.usage,
              `${error.message}\n(inboxctl reads the same environment as the service, and the same env file: INBOX_ENV_FILE, else .env.)`,
              { cause: error, code: 'config_invalid' },
            );
          throw error;
        }
      }
      return config;
    },
    async withDatabase(options, work) {
      const appConfig = await context.config();
      const { connect, resolveDatabase } = await import('./database.ts');
      const database = await resolveDatabase(appConfig, context.notice);
      try {
        const connection = await connect(database.url, appConfig, options);
        try {
          return await work(connection, appConfig);
        } finally {
          await connection.close();
        }
      } finally {
        await database.release();
      }
    },
  };
  return context;
}
