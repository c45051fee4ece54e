import { withoutQueryText } from '../error-redaction.ts';
import { CodedError, describeError } from '../errors.ts';

/**
 * A batched operation stopped part-way. Batches before the failure are committed, so the message
 * says how far it got; every operation is safe to run again and resumes where it stopped.
 */
export class OperationIncompleteError extends CodedError {
  readonly code = 'operation_incomplete';
  constructor(operation: string, progress: string, cause: unknown) {
    super(
      `The ${operation} stopped part-way (${progress}): ${describeError(withoutQueryText(cause)).replace(/\.$/, '')}. Completed batches are committed; run it again to continue.`,
      { cause },
    );
  }
}

/** The operation was refused before it changed anything (a cut-off inside the dedupe window, a concurrent purge). */
export class OperationRefusedError extends CodedError {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export class ArchiveFormatError extends CodedError {
  readonly code = 'archive_unreadable';
  readonly line: number;
  readonly reason: string;
  /** `hint`: what the reader should make of it; by default, that the file may be no archive at all. */
  constructor(file: string, line: number, reason: string, hint = 'Is this an inbox archive (*.jsonl.gz written by inboxctl purge or the retention job)?') {
    super(`${file}, line ${line}: ${reason}. ${hint}`);
    this.line = line;
    this.reason = reason;
  }
}

/**
 * A failure after part of the work was committed, with that part: `partial` is the operation's
 * result up to the failure, in the shape a completed run returns, so a caller can say what was
 * done as well as what stopped it. The failure is the cause; its message is this one's.
 */
export class PartialResultError<T = unknown> extends CodedError {
  readonly code = 'partial_result';
  readonly partial: T;
  constructor(failure: unknown, partial: T) {
    const reason = withoutQueryText(failure);
    super(reason instanceof Error ? reason.message : String(reason), { cause: failure });
    // Its subclasses are carriers of the same failure (src/cli/failure.ts): one name in the lines they print.
    this.name = 'PartialResultError';
    this.partial = partial;
  }
}
