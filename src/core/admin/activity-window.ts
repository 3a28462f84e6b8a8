/**
 * Requests per node over the last second and the last minute, without touching the hot path:
 * nodes only count attempts and failures (two increments); a once-a-second sample of those
 * totals into a ring of 61 slots gives both windows as differences. A node replaced under the
 * same name (removed, then added back) starts over: its totals went down.
 */

/** Samples kept: one a second, a minute and one more for the difference. */
const SLOTS = 61;

/** Monotonic totals of one node, as the node counts them. */
export interface ActivityTotals {
  readonly attempts: number;
  readonly failures: number;
}

/** A node's recent activity. */
export interface Activity {
  /** Attempts over the last sampled second. */
  readonly rps: number;
  readonly requestsLastMinute: number;
  readonly failuresLastMinute: number;
}

class Ring {
  readonly attempts = new Float64Array(SLOTS);
  readonly failures = new Float64Array(SLOTS);
  /** Samples taken so far (the newest is at (count - 1) % SLOTS). */
  count = 0;

  back(n: number): number {
    return (this.count - 1 - n + SLOTS * 2) % SLOTS;
  }
}

/** Per-node rings of activity totals, sampled once a second by the admin side. */
export class ActivityWindow {
  readonly #rings = new Map<string, Ring>();

  /** Records `totals` of node `name` as this second's sample. */
  sample(name: string, totals: ActivityTotals): void {
    let ring = this.#rings.get(name);
    if (ring === undefined || (ring.count > 0 && totals.attempts < ring.attempts[ring.back(0)]!)) {
      ring = new Ring();
      this.#rings.set(name, ring);
    }
    const slot = ring.count % SLOTS;
    ring.attempts[slot] = totals.attempts;
    ring.failures[slot] = totals.failures;
    ring.count++;
  }

  /** Forgets nodes not in `names` (removed by a reload). */
  retain(names: ReadonlySet<string>): void {
    for (const name of this.#rings.keys()) if (!names.has(name)) this.#rings.delete(name);
  }

  /** The activity of node `name`, whose totals are now `totals`. */
  activity(name: string, totals: ActivityTotals): Activity {
    const ring = this.#rings.get(name);
    if (ring === undefined || ring.count === 0 || totals.attempts < ring.attempts[ring.back(0)]!)
      return { rps: 0, requestsLastMinute: 0, failuresLastMinute: 0 };
    const newest = ring.back(0);
    const rps = ring.count > 1 ? ring.attempts[newest]! - ring.attempts[ring.back(1)]! : 0;
    // The oldest sample at most a minute old; before a minute of samples, since the first.
    const oldest = ring.back(Math.min(ring.count - 1, SLOTS - 2));
    return {
      rps,
      requestsLastMinute: totals.attempts - ring.attempts[oldest]!,
      failuresLastMinute: totals.failures - ring.failures[oldest]!,
    };
  }
}
