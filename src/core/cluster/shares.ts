/**
 * Splitting one provider limit (requests per second, or requests in flight) between the
 * processes that enforce it together — the workers of one machine, the replicas of a fleet.
 *
 * Each member's share is one unit (when the limit has one for everyone: an idle member can still
 * serve a first request) plus the rest split by recent demand, in whole numbers summing to the limit
 * (largest remainders, ties by member name, so every member computes the same split). Shares
 * shrink at once and grow a few syncs later (ShareGate), so while membership or demand changes
 * the members that must give up capacity have done so before anyone takes it.
 */

/** A member's recent demand for one node's limit. */
export interface Demand {
  readonly member: string;
  /** Requests (or concurrent requests) wanted recently; ≥ 0. */
  readonly wanted: number;
}

/** Baseline weight as a share of the limit spread over the members (keeps idle members able). */
const BASELINE = 0.05;

/** Splits `limit` between `demands` (member order does not matter). Infinity stays Infinity. */
export function splitLimit(limit: number, demands: readonly Demand[]): Map<string, number> {
  const shares = new Map<string, number>();
  if (demands.length === 0) return shares;
  if (!Number.isFinite(limit)) {
    for (const { member } of demands) shares.set(member, Infinity);
    return shares;
  }
  const members = [...demands].sort((a, b) =>
    a.member < b.member ? -1 : a.member > b.member ? 1 : 0,
  );
  const floor = limit >= members.length ? 1 : 0;
  const rest = limit - floor * members.length;
  const baseline = Math.max(1e-9, (rest * BASELINE) / members.length);
  const weights = members.map((d) => Math.max(0, d.wanted) + baseline);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const exact = weights.map((w) => floor + (rest * w) / total);
  const whole = exact.map((x) => Math.floor(x));
  let left = limit - whole.reduce((sum, x) => sum + x, 0);
  // Largest remainders first; the sort is stable, so equal remainders go in member order.
  const order = exact.map((x, i) => ({ i, rest: x - whole[i]! })).sort((a, b) => b.rest - a.rest);
  for (const { i } of order) {
    if (left <= 0) break;
    whole[i]!++;
    left--;
  }
  members.forEach((d, i) => shares.set(d.member, whole[i]!));
  return shares;
}

/** How many recent computed shares a member's applied share must fit under. */
const GATE_HISTORY = 3;

/**
 * One member's applied share of one limit: the smallest of its last few computed shares, so it
 * shrinks at once and grows only after a few syncs agree. Members compute and apply at
 * slightly different times; as long as none lags the others by more than the history, every
 * member then runs at most its share of one common split, and the shares in force never add
 * up past the limit. A newcomer starts from `initial` (0 unless handed a safe share).
 */
export class ShareGate {
  readonly #history: number[];

  constructor(initial = 0) {
    this.#history = [initial];
  }

  /** The share to apply now, given this sync's computed share. */
  next(computed: number): number {
    this.#history.push(computed);
    if (this.#history.length > GATE_HISTORY) this.#history.shift();
    return Math.min(...this.#history);
  }

  /** The share in force (the smallest remembered). */
  get applied(): number {
    return Math.min(...this.#history);
  }
}

/** Smooths a member's demand between syncs (a burst in one interval must not swing shares). */
export function smoothDemand(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : previous * 0.7 + sample * 0.3;
}
