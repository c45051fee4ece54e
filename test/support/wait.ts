export interface WaitOptions {
  /** What is awaited, for the failure message: "the event to be processed". */
  message: string;
  /** Default 15 s: generous, since the machine may be busy; a condition that holds returns at once. */
  timeoutMs?: number;
  /** Default 50 ms. */
  intervalMs?: number;
}

/**
 * Polls until `condition` returns a value other than undefined/false, and returns it; fails after
 * `timeoutMs` with the message and the last error the condition threw. The one poll loop of the tests.
 */
export async function waitFor<T>(condition: () => Promise<T | undefined | false> | T | undefined | false, options: WaitOptions): Promise<T> {
  const { message, timeoutMs = 15_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${message}${last ? ` (last error: ${String(last)})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * `promise`'s value, or a failure made by `timedOut` if it has not settled within `timeoutMs`: a
 * statement or a pool that hangs fails the test with a reason instead of holding the run.
 */
export async function settledWithin<T>(promise: Promise<T>, timeoutMs: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), timeoutMs);
  });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}
