/**
 * Latency distributions for the benches: an HdrHistogram (hdr-histogram-js) recording
 * microseconds with three significant digits, summarized in milliseconds.
 */
import { build, type Histogram } from 'hdr-histogram-js';

/** Percentiles, min, mean and max of one distribution, in milliseconds (µs precision). */
export interface LatencySummary {
  readonly count: number;
  readonly min: number;
  readonly mean: number;
  readonly stddev: number;
  readonly p50: number;
  readonly p75: number;
  readonly p90: number;
  readonly p95: number;
  readonly p99: number;
  readonly p99_9: number;
  readonly p99_99: number;
  readonly max: number;
}

/** One point of a percentile curve: `percentile` (0–100) of the requests took ≤ `ms`. */
export interface PercentilePoint {
  readonly percentile: number;
  readonly ms: number;
}

/** The percentiles a curve is drawn through (denser towards the tail). */
export const CURVE_PERCENTILES = [
  0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 100,
] as const;

/** Microseconds to milliseconds, rounded to the microsecond. */
export function msOf(micros: number): number {
  return Math.round(micros) / 1000;
}

/** A latency recorder; `record` takes milliseconds (fractions kept to the microsecond). */
export class LatencyHistogram {
  readonly #histogram: Histogram = build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });

  /** Records one latency in milliseconds. */
  record(ms: number): void {
    this.#histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  /** The latency at `percentile` (0–100), in ms; 0 when empty. */
  at(percentile: number): number {
    if (this.count === 0) return 0;
    const max = this.#histogram.maxValue;
    if (percentile >= 100) return msOf(max);
    // A percentile reads as its bucket's upper edge, which can pass the exact maximum.
    return msOf(Math.min(max, this.#histogram.getValueAtPercentile(percentile)));
  }

  /** Every figure of the distribution (zeros when empty). */
  summary(): LatencySummary {
    const h = this.#histogram;
    const empty = this.count === 0;
    return {
      count: this.count,
      min: empty ? 0 : msOf(h.minNonZeroValue),
      mean: empty ? 0 : msOf(h.mean),
      stddev: empty ? 0 : msOf(h.stdDeviation),
      p50: this.at(50),
      p75: this.at(75),
      p90: this.at(90),
      p95: this.at(95),
      p99: this.at(99),
      p99_9: this.at(99.9),
      p99_99: this.at(99.99),
      max: this.at(100),
    };
  }

  /** The percentile curve through CURVE_PERCENTILES (empty when nothing was recorded). */
  curve(): PercentilePoint[] {
    if (this.count === 0) return [];
    return CURVE_PERCENTILES.map((percentile) => ({
      percentile,
      ms: percentile === 0 ? msOf(this.#histogram.minNonZeroValue) : this.at(percentile),
    }));
  }

  /** Frees the histogram's buffers. */
  destroy(): void {
    this.#histogram.destroy();
  }
}
