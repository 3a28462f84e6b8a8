/**
 * Counters and histograms for the request path, recorded by series index into plain arrays
 * and rendered by the prom-client Registry only at scrape time. prom-client's own labelled
 * children validate and hash their labels on every increment; here a request pays one array
 * store (plus a short bucket search for a histogram), and the exposition is the same text.
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One exported sample, in the shape prom-client's Registry renders. */
interface Sample {
  readonly labels: Labels | { le: number | string };
  readonly sharedLabels?: Labels;
  readonly value: number;
  readonly metricName?: string;
}

/** What the Registry asks a metric for. */
interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Sample[];
  aggregator: 'sum';
}

/** Shared bookkeeping: which index holds which label set (undefined = removed). */
abstract class IndexedFamily {
  protected readonly labelSets: Array<Labels | undefined> = [];

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** Allocates a series for `labels` and returns its index (its values start at 0). */
  add(labels: Labels): number {
    this.labelSets.push(labels);
    return this.labelSets.length - 1;
  }

  /** Stops exporting a series; later records into its index are ignored at scrape. */
  remove(index: number): void {
    this.labelSets[index] = undefined;
  }

  /** prom-client calls this before rendering. */
  reset(): void {
    // Values are cumulative for the process lifetime, like prom-client's counters.
  }

  abstract get(): MetricSnapshot;
}

/** A counter family: `inc(index)` is one array store. */
export class IndexedCounter extends IndexedFamily {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  #values: number[] = [];

  override add(labels: Labels): number {
    const index = super.add(labels);
    this.#values[index] = 0;
    return index;
  }

  /** Adds one to series `index`. */
  inc(index: number): void {
    this.#values[index]!++;
  }

  get(): MetricSnapshot {
    const values: Sample[] = [];
    this.labelSets.forEach((labels, index) => {
      if (labels) values.push({ labels, value: this.#values[index]! });
    });
    return { name: this.name, help: this.help, type: 'counter', values, aggregator: 'sum' };
  }
}

/** A histogram family with fixed upper bounds; counts per bucket kept per series. */
export class IndexedHistogram extends IndexedFamily {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  /** counts[index * (bounds + 1) + bucket]; the last bucket of each series is +Inf. */
  #counts: number[] = [];
  #sums: number[] = [];

  constructor(name: string, help: string, bounds: readonly number[], registry: Registry) {
    super(name, help, registry);
    this.#bounds = bounds;
  }

  override add(labels: Labels): number {
    const index = super.add(labels);
    const width = this.#bounds.length + 1;
    for (let b = 0; b < width; b++) this.#counts[index * width + b] = 0;
    this.#sums[index] = 0;
    return index;
  }

  /** Records `value` in series `index`. */
  observe(index: number, value: number): void {
    const bounds = this.#bounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    this.#counts[index * (bounds.length + 1) + bucket]!++;
    this.#sums[index]! += value;
  }

  get(): MetricSnapshot {
    const values: Sample[] = [];
    const width = this.#bounds.length + 1;
    this.labelSets.forEach((labels, index) => {
      if (!labels) return;
      let cumulative = 0;
      for (let b = 0; b < width; b++) {
        cumulative += this.#counts[index * width + b]!;
        const le = b < this.#bounds.length ? this.#bounds[b]! : '+Inf';
        values.push({
          labels: { le },
          sharedLabels: labels,
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({
        labels: {},
        sharedLabels: labels,
        value: this.#sums[index]!,
        metricName: `${this.name}_sum`,
      });
      values.push({
        labels: {},
        sharedLabels: labels,
        value: cumulative,
        metricName: `${this.name}_count`,
      });
    });
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }
}
