import { withoutQueryText } from '../error-redaction.ts';
import { ConfigError, describeError } from '../errors.ts';
import { ArchiveFormatError, OperationIncompleteError, OperationRefusedError, PartialResultError } from '../operations/errors.ts';
import { blamesTheDatabase } from '../operations/database-blame.ts';
import type { CliOutput } from './context.ts';
import { CliError, type ExitCode, exitCodeClasses as classCodes, exitCodes, ownCode } from './exit-codes.ts';
import { toJson } from './output.ts';

/** Why a command ended without its answer: the same for the line on stderr and, with --json, the object on stdout. */
export interface CliFailure {
  exitCode: ExitCode;
  /** Stable snake_case: the typed error's own code where it has one, else the class of its exit code. */
  code: string;
  message: string;
  /** A bad configuration's problems, one each (the message lists them too). */
  problems?: string[];
  /** What the command had done when it failed (committed): its --json answer so far, and the lines a finished run prints. */
  partial?: { answer: unknown; lines: string[] };
}

/** A command's PartialResultError: its whole answer up to the failure (every provider or file done), and the lines a finished run prints for it. */
class PartialAnswerError extends PartialResultError {
  readonly lines: string[];
  constructor(failure: unknown, answer: unknown, lines: string[]) {
    super(failure, answer);
    this.lines = lines;
  }
}

/**
 * What a command that works unit by unit (providers, files) throws when a unit fails: the units
 * done and, when the failure says how far it got, the one it stopped in, beside the failure.
 */
export function partialAnswer<T>(error: unknown, done: readonly T[], lines: (results: T[]) => string[]): unknown {
  const stoppedIn = error instanceof PartialResultError ? [error.partial as T] : [];
  const results = [...done, ...stoppedIn];
  if (results.length === 0) return error;
  return new PartialAnswerError(error instanceof PartialResultError ? error.cause : error, results, lines(results));
}

/** The same for a command of one operation: the operation's result up to the failure is the answer so far. */
export function partialResult<T>(error: unknown, lines: (result: T) => string[]): unknown {
  if (!(error instanceof PartialResultError) || error instanceof PartialAnswerError) return error;
  return new PartialAnswerError(error.cause, error.partial, lines(error.partial as T));
}

function fromCliError(error: CliError): CliFailure {
  const problems = error.cause instanceof ConfigError ? { problems: error.cause.problems } : {};
  return { exitCode: error.exitCode, code: error.code, message: error.message, ...problems };
}

/** Whatever a command threw, as the documented exit code and one message; never the SQL of a failed statement. */
export function failureOf(thrown: unknown): CliFailure {
  const error = withoutQueryText(thrown);
  if (error instanceof PartialResultError) {
    const partial = { answer: error.partial, lines: error instanceof PartialAnswerError ? error.lines : [] };
    const failure = failureOf(error.cause);
    // Part of the work is committed: exit 3 would say that nothing changed.
    if (failure.exitCode !== exitCodes.database) return { ...failure, partial };
    return { ...failure, exitCode: exitCodes.failed, code: 'operation_incomplete', partial };
  }
  if (error instanceof CliError) return fromCliError(error);
  if (error instanceof OperationRefusedError) return { exitCode: exitCodes.usage, code: error.code, message: `refused, nothing changed: ${error.message}` };
  // Before the database's blame: a run that stopped part-way may have committed batches, whatever stopped it.
  if (error instanceof OperationIncompleteError || error instanceof ArchiveFormatError)
    return { exitCode: exitCodes.failed, code: error.code, message: error.message };
  if (blamesTheDatabase(error))
    return { exitCode: exitCodes.database, code: classCodes[exitCodes.database], message: `database unreachable: ${describeError(error)}` };
  if ((error as { code?: unknown }).code === 'ENOENT') return { exitCode: exitCodes.usage, code: classCodes[exitCodes.usage], message: describeError(error) };
  return { exitCode: exitCodes.failed, code: ownCode(error) ?? classCodes[exitCodes.failed], message: `failed: ${describeError(error)}` };
}

/**
 * The one place a failure is told: a line on stderr for whoever watches, and with --json the same
 * as `{"error": {code, exitCode, message}}` on stdout, so a script parses stdout whatever the exit
 * code; beside it, as `partial`, what was done before the failure (its lines, without --json).
 * Exit 1 is not an error but an answer that needs attention: the command printed it.
 */
export function reportFailure(output: { stdout: CliOutput; stderr: CliOutput }, failure: CliFailure, json: boolean): ExitCode {
  const { exitCode, code, message, problems, partial } = failure;
  if (!json) for (const line of partial?.lines ?? []) output.stdout.write(`${line}\n`);
  output.stderr.write(`inboxctl: ${message}\n`);
  if (json && exitCode !== exitCodes.attention) {
    const error = { code, exitCode, message, ...(problems ? { problems } : {}) };
    output.stdout.write(toJson(partial ? { error, partial: partial.answer } : { error }));
  }
  return exitCode;
}
