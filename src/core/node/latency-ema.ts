/**
 * Exponential moving average of a node's answered round trips, in integer microseconds with
 * α = 1/8 done by shifts, as CascadeRPC does: `ema = ema − (ema >> 3) + (sample >> 3)`.
 * Starts unmeasured; the first sample is taken as is. Only successful answers feed it: a
 * node that refuses fast must not look like the fastest node in its tier.
 */

/** Largest sample kept (µs), as a 32-bit value. */
const MAX_SAMPLE_US = 0xfffffffe;

export class LatencyEma {
  #us = -1;

  /** True until the first successful answer. */
  get isMeasured(): boolean {
    return this.#us >= 0;
  }

  /** The average in µs; Infinity while unmeasured (sorts last). */
  get micros(): number {
    return this.#us < 0 ? Infinity : this.#us;
  }

  /** Folds in one answered round trip of `roundTripMs` milliseconds. */
  observe(roundTripMs: number): void {
    const sample = Math.min(MAX_SAMPLE_US, Math.max(0, Math.round(roundTripMs * 1000)));
    if (this.#us < 0) {
      this.#us = sample;
      return;
    }
    // >>> keeps the arithmetic unsigned 32-bit like the reference.
    this.#us = this.#us - (this.#us >>> 3) + (sample >>> 3);
  }
}
