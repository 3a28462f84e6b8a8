/**
 * Load generators of the hot-path benchmark. Closed-loop load (fixed connections, as fast as
 * answers come) runs on wrk when it is installed (hotpath-wrk.ts) — C, one thread, µs
 * percentiles — else on autocannon (here, through src/bench/load-runner.ts). Fixed-rate load
 * runs on LoadClient (hotpath-load-client.ts), a small open-loop client built on undici's
 * callback API with µs HDR histograms; its closed loop stands in for wrk's one-connection run
 * when wrk is missing. This module holds what they share: the spec of a run and its result.
 */
import { runLoad } from '../src/bench/load-runner.js';

/** What one load run measured; latencies in µs. */
export interface LoadResult {
  readonly tool: 'wrk' | 'autocannon' | 'open-loop' | 'closed-loop';
  readonly connections: number;
  readonly durationS: number;
  readonly requests: number;
  readonly rps: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  /** Non-2xx answers plus socket errors and timeouts. */
  readonly errors: number;
  /** Fixed-rate runs: the rate asked for. */
  readonly targetRate?: number;
}

/** One POST body, sent by every generator. */
export interface LoadSpec {
  readonly url: string;
  readonly body: string;
  readonly connections: number;
  readonly durationS: number;
}

/** Closed-loop load with autocannon (in this process, through runLoad of `cascade bench`). */
export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const run = await runLoad({ ...spec, timeoutS: 10 });
  const us = (percentile: number): number => run.latency.at(percentile) * 1000;
  return {
    tool: 'autocannon',
    connections: spec.connections,
    durationS: spec.durationS,
    requests: run.responses,
    rps: run.responses / spec.durationS,
    p50Us: us(50),
    p90Us: us(90),
    p99Us: us(99),
    maxUs: us(100),
    errors: run.errors + run.non2xx,
  };
}
