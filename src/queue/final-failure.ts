/** What pg-boss stored as a dead-lettered job's final attempt's output: our `{ error }`, or its own serialized error (expiry, shutdown). */
export function describeFinalFailure(sourceOutput: unknown): string {
  if (sourceOutput && typeof sourceOutput === 'object') {
    const output = sourceOutput as { error?: unknown; message?: unknown };
    if (typeof output.error === 'string') return output.error;
    if (typeof output.message === 'string') return `pg-boss: ${output.message}`;
  }
  return 'retries exhausted (pg-boss recorded no error)';
}
