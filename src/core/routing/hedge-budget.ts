/**
 * The cap on hedged attempts. Every hedgeable request earns `share` of a hedge; a hedge spends
 * a whole one. Credit starts at zero, so over any run hedges ≤ share × hedgeable requests — a
 * slow period cannot turn every request into two paid attempts. Credit saved while all is well
 * is capped at `burst`, so a quiet hour does not buy a storm of hedges later.
 */

/** Bounds hedged attempts to a share of hedgeable requests. */
export class HedgeBudget {
  #credit = 0;

  constructor(
    /** Hedges allowed per hedgeable request, 0..1. */
    readonly share: number,
    /** Most hedges saved up. */
    readonly burst = 3,
  ) {}

  /** A hedgeable request started. */
  earn(): void {
    this.#credit = Math.min(this.#credit + this.share, Math.max(this.burst, this.share));
  }

  /** Whether a hedge may be sent now. */
  available(): boolean {
    // Tolerance for float sums: ten requests at 0.1 earn one hedge, not 0.9999999999999999.
    return this.#credit >= 1 - 1e-9;
  }

  /** Spends one hedge; false when the cap would be passed. */
  take(): boolean {
    if (!this.available()) return false;
    this.#credit = Math.max(0, this.#credit - 1);
    return true;
  }
}
