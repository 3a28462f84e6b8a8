/**
 * Reading a recording upstream's arrival times (ms) against a rate bound: the most calls in any
 * window of a given length.
 */

/**
 * The window the rate bound is checked in, as the upstream saw the calls: the bound holds for
 * the seconds in which cascade admits them, and a call reaches the upstream some milliseconds
 * later — on a busy machine, calls admitted in two seconds can land within one (a burst of 15
 * at 15 a second read 31 in a 1 s window once). 100 ms of that delivery jitter is allowed.
 */
export const ARRIVAL_WINDOW_MS = 900;

/** The most arrivals in any window of `ms` milliseconds. */
export function busiestWindow(arrivals: readonly number[], ms: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
