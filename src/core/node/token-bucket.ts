/**
 * A token bucket: `capacity` tokens (the burst), refilled continuously at `ratePerSecond`.
 * Starts full. `tryTake` either consumes one token (returns 0) or returns the exact number
 * of milliseconds until the next token exists, so a caller can sleep precisely that long
 * instead of backing off blindly. Equivalent to GCRA with burst = capacity.
 */
export class TokenBucket {
  #tokens: number;
  #updatedAt: number;
  #rate: number;
  #capacity: number;

  constructor(ratePerSecond: number, now: number, capacity = ratePerSecond) {
    this.#rate = ratePerSecond;
    this.#capacity = capacity;
    this.#tokens = capacity;
    this.#updatedAt = now;
  }

  /** Tokens per second it refills at. */
  get rate(): number {
    return this.#rate;
  }

  /** Takes a token at time `now` (ms). Returns 0 on success, else ms until one is available. */
  tryTake(now: number): number {
    this.#refill(now);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return ((1 - this.#tokens) * 1000) / this.#rate;
  }

  /** Returns a token taken at the last `tryTake` (a second limit refused the work after all). */
  giveBack(): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + 1);
  }

  /** Tokens available at `now` (for tests and tables). */
  available(now: number): number {
    this.#refill(now);
    return this.#tokens;
  }

  /** Applies a new limit, keeping the tokens already earned (capped at the new capacity). */
  reconfigure(ratePerSecond: number, now: number, capacity = ratePerSecond): void {
    this.#refill(now);
    this.#rate = ratePerSecond;
    this.#capacity = capacity;
    this.#tokens = Math.min(this.#tokens, capacity);
  }

  #refill(now: number): void {
    const elapsed = now - this.#updatedAt;
    if (elapsed <= 0) return;
    this.#tokens = Math.min(this.#capacity, this.#tokens + (elapsed * this.#rate) / 1000);
    this.#updatedAt = now;
  }
}
