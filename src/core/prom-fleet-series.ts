/**
 * The `--workers` primary's /metrics: the series of every serving worker, added up — plus
 * what the workers that have exited had counted by the last scrape, so that a crash and
 * restart never turn a counter back (Prometheus would read the drop as a reset and count the
 * survivors' totals again). Counts a worker made after the last scrape die with it.
 */
import { AggregatorRegistry } from 'prom-client';
import type { SeriesSnapshot } from './metrics.js';
import { spellNaN } from './prom-metrics.js';

/** What the gatherer needs of a worker. */
export interface SeriesSource {
  readonly id: number;
  isConnected(): boolean;
}

/** Metric types whose values only grow: what an exited worker leaves in the sums. */
const GROWING = new Set(['counter', 'histogram', 'summary']);

/** The primary's sum of its workers' series over time. */
export class FleetSeries<W extends SeriesSource> {
  /** Each live worker's series as of the last scrape. */
  readonly #last = new Map<number, SeriesSnapshot>();
  /** Exited workers' counters (folded into one at the next scrape). */
  #retired: SeriesSnapshot[] = [];

  constructor(
    /** Asks one worker for its series; undefined when it did not answer in time. */
    private readonly ask: (worker: W) => Promise<SeriesSnapshot | undefined>,
  ) {}

  /**
   * The sum over `workers` (those serving) and the exited ones, as exposition text; rejects
   * when a worker still connected sent nothing (a partial sum would read as a reset).
   */
  async render(workers: readonly W[]): Promise<string> {
    const answers = await Promise.all(workers.map((worker) => this.ask(worker)));
    const silent = workers.filter((worker, i) => answers[i] === undefined && worker.isConnected());
    if (silent.length > 0)
      throw new Error(`${silent.length} of ${workers.length} workers sent no metrics in time`);
    const snapshots: SeriesSnapshot[] = [];
    workers.forEach((worker, i) => {
      const answer = answers[i];
      if (answer === undefined) return;
      this.#last.set(worker.id, answer);
      snapshots.push(answer);
    });
    if (this.#retired.length > 1) this.#retired = [await sumOf(this.#retired).getMetricsAsJSON()];
    return spellNaN(await sumOf([...this.#retired, ...snapshots]).metrics());
  }

  /** Worker `id` exited: its counters as of the last scrape stay in every later sum. */
  retire(id: number): void {
    const last = this.#last.get(id);
    this.#last.delete(id);
    if (last === undefined) return;
    const counters = last.filter((metric) => GROWING.has((metric as { type?: string }).type ?? ''));
    if (counters.length > 0) this.#retired.push(counters);
  }
}

/**
 * Snapshots added up into one registry (counters and histograms summed; gauges by the
 * aggregator each declares).
 */
function sumOf(snapshots: readonly SeriesSnapshot[]) {
  return AggregatorRegistry.aggregate(
    snapshots as Parameters<typeof AggregatorRegistry.aggregate>[0],
  );
}
