import { parseEnv } from 'node:util';
import { ConfigError } from '../errors.ts';
import type { ReadFile } from './config.ts';

/** The env file read when INBOX_ENV_FILE is not set: `.env` in the working directory, if there is one. */
export const DEFAULT_ENV_FILE = '.env';

/** Read before the schema parses anything, so no zod key carries it: its meaning, for docs/configuration.md. */
export const envFileVariable = {
  name: 'INBOX_ENV_FILE',
  whenUnset: `\`${DEFAULT_ENV_FILE}\` if present`,
  description:
    'An env file (dotenv format) the service and `inboxctl` both read at start: a variable set in the environment wins over it. Unset: `.env` in the working directory when there is one; set and empty: none; a named file that cannot be read is a configuration error.',
};

/**
 * The process's environment over the env file's: the service and `inboxctl` read the same file, so
 * a setting written there once (DATABASE_URL, WEBHOOK_SECRET_STRIPE, INBOX_CONFIG, …) reaches every
 * terminal of the checkout. A variable set in the environment wins over the file. INBOX_ENV_FILE
 * names the file (one that cannot be read is a configuration error); set and empty, none is read;
 * unset, `.env` is read when it exists. The file is dotenv's format, as Node's --env-file reads it.
 */
export function withEnvFile(
  env: Record<string, string | undefined>,
  readFile: ReadFile,
): { env: Record<string, string | undefined>; file: string | undefined } {
  const named = env.INBOX_ENV_FILE;
  if (named === '') return { env, file: undefined };
  const path = named ?? DEFAULT_ENV_FILE;
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    if (named === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return { env, file: undefined };
    throw new ConfigError([`INBOX_ENV_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`]);
  }
  const fromFile: Record<string, string | undefined> = parseEnv(text);
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
  return { env: { ...fromFile, ...set }, file: path };
}
