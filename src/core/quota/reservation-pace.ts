/**
 * How many credits a replica declares, at each sync, that it may spend before the next one —
 * its *reserve*. A replica killed with kill -9 cannot send what it booked since its last sync;
 * Redis keeps its last reserve, and once the replica is gone counts it as spent (the sync
 * script, redis-scripts.ts). So the fleet's total errs high (by what was reserved and not
 * spent), never low, as long as the replica spent no more than its reserve. The reserve
 * follows the replica's own pace: `RESERVE_FACTOR` times the most it booked between two syncs
 * over the last `RESERVE_WINDOW` syncs, so a steady or slowing load is covered.
 *
 * A faster load outruns that, so a replica does not wait for its timer then: once it has booked
 * half its reserve since the last sync it syncs at once (redis-coordinator.ts), and such an
 * *early* sync holds at least twice the reserve before it. From idle to full load the reserve
 * grows geometrically, a Redis round trip at a time, instead of one sync interval at a time.
 */

/** Syncs the pace remembers (about a second at the default 100 ms interval). */
export const RESERVE_WINDOW = 10;
/** The reserve is this many times the recent peak spend per sync. */
export const RESERVE_FACTOR = 2;

/** One node's recent spending, sampled once per sync. */
export class ReservationPace {
  readonly #steps: number[] = [];
  #last = 0;
  /** The reserve given at the last sync. */
  #held = 0;

  /**
   * Takes the counter's running total of credits spent (sampled once per sync) and returns
   * the reserve to hold until the next sync; `early` when this sync was asked for because the
   * spending reached half the reserve held (the reserve then at least doubles).
   */
  next(spent: number, early = false): number {
    this.#steps.push(Math.max(0, spent - this.#last));
    this.#last = spent;
    if (this.#steps.length > RESERVE_WINDOW) this.#steps.shift();
    const paced = RESERVE_FACTOR * Math.max(...this.#steps);
    this.#held = early ? Math.max(paced, RESERVE_FACTOR * this.#held) : paced;
    return this.#held;
  }

  /** Forgets the pace (the counter's total restarted from 0). */
  reset(): void {
    this.#steps.length = 0;
    this.#last = 0;
    this.#held = 0;
  }
}

/** Credits booked since the last sync at which a replica syncs early: half its reserve. */
export function earlySyncAt(reserve: number): number {
  return Math.max(1, Math.ceil(reserve / 2));
}
