/** Where a collapsed error goes: `repeated` is how many of its kind were not logged since the last line (0 for the first). */
type ErrorLine = (error: unknown, repeated: number) => void;

// Kinds are a handful (a connection refused, a timeout, a terminated connection); the cap only
// keeps a flood of distinct messages from growing the map without end.
const MAX_KINDS = 100;

function kindOf(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : String(message ?? error);
}

/**
 * pg-boss reports every failed background step (each worker's fetch, supervise, cron, LISTEN) as
 * an `error` event: during an outage about five a second, each with a stack (58 lines in 10 s).
 * The first error of a kind (its `code`, else its message) is logged at once; more of that kind
 * within `intervalMs` are counted, and the first one after the interval is logged with that count.
 * The trade-off: the count of an outage's last interval is said only if the kind comes again.
 */
export function collapseRepeatedErrors(options: { intervalMs: number; now: () => number; log: ErrorLine }): (error: unknown) => void {
  const kinds = new Map<string, { loggedAt: number; repeated: number }>();
  return (error) => {
    const kind = kindOf(error);
    const now = options.now();
    const seen = kinds.get(kind);
    if (seen && now - seen.loggedAt < options.intervalMs) {
      seen.repeated += 1;
      return;
    }
    if (!seen && kinds.size >= MAX_KINDS) kinds.clear();
    kinds.set(kind, { loggedAt: now, repeated: 0 });
    options.log(error, seen?.repeated ?? 0);
  };
}
