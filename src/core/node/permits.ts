/**
 * Concurrency permits for one node: at most `max` attempts in flight. Taking one never
 * blocks; `waitFor` queues FIFO for the "every candidate is saturated" case, bounded by a
 * timeout so a request never waits past its budget.
 */
import type { Clock } from '../clock.js';

export class Permits {
  readonly #clock: Clock;
  #max: number;
  #inFlight = 0;
  #peak = 0;
  #windowPeak = 0;
  readonly #waiters: Array<(granted: boolean) => void> = [];

  constructor(max: number, clock: Clock) {
    this.#max = max;
    this.#clock = clock;
  }

  /** Attempts in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The most attempts ever in flight at once. */
  get peak(): number {
    return this.#peak;
  }

  /** The most in flight since the last call (then counting starts again from now). */
  takePeak(): number {
    const peak = this.#windowPeak;
    this.#windowPeak = this.#inFlight;
    return peak;
  }

  get max(): number {
    return this.#max;
  }

  /** Takes a permit if one is free. */
  tryAcquire(): boolean {
    if (this.#inFlight >= this.#max) return false;
    this.#inFlight++;
    if (this.#inFlight > this.#peak) this.#peak = this.#inFlight;
    if (this.#inFlight > this.#windowPeak) this.#windowPeak = this.#inFlight;
    return true;
  }

  /** Returns a permit; hands it straight to the oldest waiter if there is one. */
  release(): void {
    const waiter = this.#inFlight <= this.#max ? this.#waiters.shift() : undefined;
    if (waiter) {
      waiter(true);
      return;
    }
    this.#inFlight--;
  }

  /** Waits (FIFO) up to `timeoutMs` for a permit. Resolves true holding one, false on timeout. */
  waitFor(timeoutMs: number): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const grant = (granted: boolean): void => {
        timer.cancel();
        resolve(granted);
      };
      const timer = this.#clock.setTimer(() => {
        const index = this.#waiters.indexOf(grant);
        if (index !== -1) this.#waiters.splice(index, 1);
        resolve(false);
      }, timeoutMs);
      this.#waiters.push(grant);
    });
  }

  /** Applies a new cap; attempts already in flight keep their permits. */
  setMax(max: number): void {
    this.#max = max;
    while (this.#waiters.length > 0 && this.#inFlight < this.#max) {
      this.#inFlight++;
      this.#waiters.shift()?.(true);
    }
  }
}
