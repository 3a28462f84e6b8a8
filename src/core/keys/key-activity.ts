/**
 * What the keys of one process did: calls in flight and calls by outcome, per key. With
 * `--workers` every worker serves some of a key's calls; the primary asks each for this and
 * adds them up, so `cascade key list` shows the whole proxy.
 */
import type { ClientKeys } from './client-keys.js';

/** One key's calls in one process (or summed over several). */
export interface KeyCalls {
  readonly inFlight: number;
  /** Calls by outcome (`allowed`, or a refusal reason). */
  readonly requests: Readonly<Record<string, number>>;
}

/** Calls per key name. */
export type KeyActivity = Readonly<Record<string, KeyCalls>>;

/** This process's calls per key. */
export function keyActivity(keys: ClientKeys): KeyActivity {
  const activity: Record<string, KeyCalls> = {};
  for (const state of keys.list())
    activity[state.name] = { inFlight: state.inFlight, requests: Object.fromEntries(state.counts) };
  return activity;
}

/** The sum of several processes' activity. */
export function sumActivity(parts: readonly KeyActivity[]): KeyActivity {
  const sum: Record<string, { inFlight: number; requests: Record<string, number> }> = {};
  for (const part of parts) {
    for (const [name, calls] of Object.entries(part)) {
      const into = (sum[name] ??= { inFlight: 0, requests: {} });
      into.inFlight += calls.inFlight;
      for (const [outcome, count] of Object.entries(calls.requests))
        into.requests[outcome] = (into.requests[outcome] ?? 0) + count;
    }
  }
  return sum;
}
