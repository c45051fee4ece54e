/**
 * The in-process time of a delivery run: a POST's timeout and the run's budget. Injected so a test
 * moves it by hand (pg-boss's TestClock fits: this is a part of its Clock) instead of waiting out a
 * hanging consumer. Waits between attempts are not here: they are deadlines in the database
 * (delivery_lanes.next_attempt_at, pg-boss's start_after), on the one clock every instance shares.
 */
export interface DeliveryTimers {
  /** Milliseconds on a clock that does not go back: when a run began, how long it has run. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemDeliveryTimers: DeliveryTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
