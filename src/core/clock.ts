/**
 * Time sources. Routing reads one monotonic clock (milliseconds, never jumps with wall-clock
 * changes) and arms its timers through it; billing periods and HTTP dates read the wall clock.
 * Everything that waits — rate-limit sleeps, permit waits, attempt deadlines — goes through a
 * Clock, so tests drive it with ManualClock and never sleep.
 */

import { performance } from 'node:perf_hooks';

/** A timer armed through a Clock. */
export interface ClockTimer {
  /** Disarms the timer; a no-op once it fired. */
  cancel(): void;
}

/** A monotonic millisecond clock with timers, plus the wall clock. */
export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Milliseconds since the Unix epoch (for HTTP dates and calendars only). */
  wallNow(): number;
  /** Calls `fn` once, `ms` from now. Real timers do not keep the process alive. */
  setTimer(fn: () => void, ms: number): ClockTimer;
  /** Resolves `ms` from now. */
  sleep(ms: number): Promise<void>;
}

class RealTimer implements ClockTimer {
  readonly #handle: NodeJS.Timeout;

  constructor(fn: () => void, ms: number) {
    this.#handle = setTimeout(fn, ms);
    this.#handle.unref();
  }

  cancel(): void {
    clearTimeout(this.#handle);
  }
}

/** performance.now() and Node's timers. */
// `performance` is imported, not read from globalThis: there it is a lazy getter, which
// optimized code cannot fold, so every clock reading also paid a global lookup and a call.
export const MONOTONIC_CLOCK: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimer: (fn, ms) => new RealTimer(fn, ms),
  // A sleeping request holds its client connection open: keep the process alive meanwhile.
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

interface ManualTimer extends ClockTimer {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
  fired: boolean;
}

/**
 * A clock tests move by hand: `advance` fires every timer that falls due, in order, each at
 * its own time. `advanceAsync` lets promises settle between timers, for async code paths.
 */
export class ManualClock implements Clock {
  #now: number;
  #wall: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  constructor(start = 0, wallStart = Date.UTC(2026, 0, 15)) {
    this.#now = start;
    this.#wall = wallStart;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.#wall;
  }

  setTimer(fn: () => void, ms: number): ClockTimer {
    const timers = this.#timers;
    const timer: ManualTimer = {
      due: this.#now + Math.max(0, ms),
      seq: this.#seq++,
      fn,
      fired: false,
      cancel() {
        const index = timers.indexOf(timer);
        if (index !== -1) timers.splice(index, 1);
      },
    };
    timers.push(timer);
    return timer;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(resolve, ms));
  }

  /** Timers armed and not yet fired. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing due timers synchronously in deadline order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (let timer = this.#next(end); timer; timer = this.#next(end)) this.#fire(timer);
    this.#step(end);
  }

  /** Like advance, but awaits pending promise callbacks after each timer fires. */
  async advanceAsync(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (let timer = this.#next(end); timer; timer = this.#next(end)) {
      this.#fire(timer);
      await settle();
    }
    this.#step(end);
    await settle();
  }

  #next(end: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const timer of this.#timers) {
      if (timer.due > end) continue;
      if (!best || timer.due < best.due || (timer.due === best.due && timer.seq < best.seq))
        best = timer;
    }
    return best;
  }

  #fire(timer: ManualTimer): void {
    timer.cancel();
    this.#step(timer.due);
    timer.fired = true;
    timer.fn();
  }

  #step(to: number): void {
    if (to <= this.#now) return;
    this.#wall += to - this.#now;
    this.#now = to;
  }
}

/** Lets queued promise callbacks (and their follow-ups) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
