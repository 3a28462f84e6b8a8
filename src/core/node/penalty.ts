/**
 * A node's penalty: while active the router passes the node over. A failure penalizes for
 * at least 5 s; an upstream's Retry-After can ask for longer, capped at 300 s so a provider
 * cannot take itself out of rotation indefinitely. A penalty is only ever extended, never
 * shortened by a later, shorter failure; only a successful answer clears it.
 */

/** Shortest penalty for any failure. */
export const BASE_PENALTY_SECONDS = 5;
/** Longest penalty a Retry-After can ask for. */
export const MAX_PENALTY_SECONDS = 300;

/** The penalty length for a failure that asked for `retryAfterSeconds` (0 = did not ask). */
export function penaltySeconds(retryAfterSeconds: number): number {
  return Math.max(BASE_PENALTY_SECONDS, Math.min(retryAfterSeconds, MAX_PENALTY_SECONDS));
}

/** Penalty state of one node, in monotonic milliseconds. */
export class Penalty {
  #until = 0;
  #since = 0;

  /** True while the penalty lasts. */
  isActive(now: number): boolean {
    return now < this.#until;
  }

  /** When the penalty ends (0 = never penalized or cleared). */
  get until(): number {
    return this.#until;
  }

  /** When the current penalty began (meaningful while one is active). */
  get since(): number {
    return this.#since;
  }

  /** Penalizes from `now` for penaltySeconds(retryAfter), keeping a longer standing penalty. */
  penalize(now: number, retryAfterSeconds: number): void {
    if (!this.isActive(now)) this.#since = now;
    const until = now + penaltySeconds(retryAfterSeconds) * 1000;
    if (until > this.#until) this.#until = until;
  }

  /** Clears the penalty (a successful answer). */
  clear(): void {
    this.#until = 0;
  }
}
