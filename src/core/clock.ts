/**
 * Time sources. Routing reads one monotonic clock (milliseconds, never jumps with wall-clock
 * changes); billing periods read the UTC calendar. Both are injectable so tests need no sleeps.
 */

/** A monotonic millisecond clock. */
export interface Clock {
  now(): number;
}

/** performance.now(): monotonic, sub-millisecond. */
export const MONOTONIC_CLOCK: Clock = { now: () => performance.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current = 0) {}

  now(): number {
    return this.current;
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.current += ms;
  }
}
