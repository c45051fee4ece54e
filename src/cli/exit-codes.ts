import { CodedError } from '../errors.ts';

/**
 * What an inboxctl exit code means, the same for every command, so scripts and alerts can act on
 * it without reading the output.
 */
export const exitCodes = {
  /** Done; nothing needs attention. */
  ok: 0,
  /** Done, and the answer needs attention: `stats` found failed events or pending ones past the threshold; `show` found no such event; `verify` found events no configured secret verifies now. */
  attention: 1,
  /** The command line or the configuration is wrong, or the request was refused as unsafe (a purge inside the dedupe window without --force). Nothing was changed. */
  usage: 2,
  /** The database could not be reached (or is not migrated). Nothing was changed. */
  database: 3,
  /** The operation started and stopped part-way; completed batches are committed. Running it again continues. */
  failed: 4,
} as const;

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

/** The code of a failure that has none of its own: the class of its exit code. */
export const exitCodeClasses: Record<ExitCode, string> = {
  [exitCodes.ok]: 'ok',
  [exitCodes.attention]: 'attention',
  [exitCodes.usage]: 'usage',
  [exitCodes.database]: 'database_unavailable',
  [exitCodes.failed]: 'failed',
};

/** An error's `code` when it is one of ours (snake_case), not a driver's SQLSTATE or Node's ENOENT. */
export function ownCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[a-z]+(?:_[a-z]+)*$/.test(code) ? code : undefined;
}

/** A problem the CLI reports in one line and turns into an exit code. */
export class CliError extends CodedError {
  readonly exitCode: ExitCode;
  /** The stable snake_case code `--json` reports: the one given, else the cause's, else the exit code's class. */
  readonly code: string;
  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options);
    this.exitCode = exitCode;
    this.code = options?.code ?? ownCode(options?.cause) ?? exitCodeClasses[exitCode];
  }
}

export const usageError = (message: string) => new CliError(exitCodes.usage, message);
