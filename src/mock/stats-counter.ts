/** The counters behind MockNode.stats(). */
import type { AnswerTally } from './rpc-responder.js';
import type { MockStats } from './types.js';

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Counts requests, methods, errors, concurrency, connections and faults of one node. */
export class StatsCounter implements AnswerTally {
  requests = 0;
  connections = 0;
  faults = 0;
  inFlight = 0;
  inFlightPeak = 0;
  notifications = 0;
  accepted = 0;
  alreadyKnown = 0;
  readonly #byMethod = new Map<string, number>();
  readonly #errorsByMethod = new Map<string, number>();
  #idleWaiters: Array<() => void> = [];

  /** A JSON-RPC request arrived (before its body is read). */
  begin(): void {
    this.requests++;
    if (++this.inFlight > this.inFlightPeak) this.inFlightPeak = this.inFlight;
  }

  /** Its response finished or its connection closed. */
  readonly end = (): void => {
    if (--this.inFlight > 0 || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  };

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** One call of `method` (each batch element counts). */
  count(method: string): void {
    bump(this.#byMethod, method);
  }

  /** A call without an id was answered with nothing. */
  notification(): void {
    this.notifications++;
  }

  /** A call of `method` was answered with a JSON-RPC error. */
  error(method: string): void {
    bump(this.#errorsByMethod, method);
  }

  /** A copy for callers. */
  snapshot(): MockStats {
    return {
      requests: this.requests,
      byMethod: Object.fromEntries(this.#byMethod),
      inFlight: this.inFlight,
      inFlightPeak: this.inFlightPeak,
      connections: this.connections,
      faults: this.faults,
      notifications: this.notifications,
      errorsByMethod: Object.fromEntries(this.#errorsByMethod),
      accepted: this.accepted,
      alreadyKnown: this.alreadyKnown,
    };
  }

  /** Zeroes the counters; requests still in flight stay counted as in flight. */
  reset(): void {
    this.requests = 0;
    this.connections = 0;
    this.faults = 0;
    this.notifications = 0;
    this.accepted = 0;
    this.alreadyKnown = 0;
    this.inFlightPeak = this.inFlight;
    this.#byMethod.clear();
    this.#errorsByMethod.clear();
  }
}
