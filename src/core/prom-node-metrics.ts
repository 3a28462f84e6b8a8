/**
 * The per-node upstream series: attempts by outcome, their durations, nodes passed over and
 * streams broken off. Each node gets its series indexes once (forNode) and a recorder that
 * closes over them, so recording an attempt is two array stores and no lookup.
 */
import type { Registry } from 'prom-client';
import { IndexedCounter, IndexedHistogram } from './indexed-series.js';
import { ATTEMPT_OUTCOMES, DURATION_BUCKETS, SKIP_REASONS, type NodeMetrics } from './metrics.js';
import type { ChainCounters } from './prom-chain-metrics.js';
import type { TierLabel } from './prom-health-metrics.js';

/** One node's recorder and the series indexes it records into (kept to remove them). */
export interface NodeSeries extends TierLabel {
  readonly recorder: NodeMetrics;
  /** Series indexes of the node's attempt outcomes and skip reasons. */
  readonly attempts: readonly number[];
  readonly skips: readonly number[];
  readonly breaks: number;
}

/** rpc_upstream_attempts_total, rpc_upstream_duration_seconds, skips and stream breaks, by node. */
export class NodeCounters {
  readonly #attempts: IndexedCounter;
  readonly #attemptDurations: IndexedHistogram;
  readonly #skips: IndexedCounter;
  readonly #streamBreaks: IndexedCounter;
  readonly #nodes = new Map<string, NodeSeries>();

  constructor(registry: Registry) {
    this.#attempts = new IndexedCounter(
      'rpc_upstream_attempts_total',
      'Attempts sent to upstream RPC nodes',
      registry,
    );
    this.#attemptDurations = new IndexedHistogram(
      'rpc_upstream_duration_seconds',
      'Upstream RPC attempt duration',
      DURATION_BUCKETS,
      registry,
    );
    this.#skips = new IndexedCounter(
      'rpc_upstream_skips_total',
      'Nodes passed over without sending a request',
      registry,
    );
    this.#streamBreaks = new IndexedCounter(
      'cascade_upstream_stream_breaks_total',
      'Streamed answers the upstream broke off after the client had received their first bytes',
      registry,
    );
  }

  /** Each known node's series, by name (the health gauges read its tier label). */
  get byName(): ReadonlyMap<string, NodeSeries> {
    return this.#nodes;
  }

  /**
   * Gives a new node its series and recorder; `chain` records its lag skips and stale answers
   * (passed here because the chain counters are registered after these, and the exposition
   * keeps registration order).
   */
  add(name: string, chain: ChainCounters): NodeSeries {
    const attempts = ATTEMPT_OUTCOMES.map((outcome) => this.#attempts.add({ node: name, outcome }));
    for (const outcome of ATTEMPT_OUTCOMES) this.#attemptDurations.add({ node: name, outcome });
    const skips = SKIP_REASONS.map((reason) => this.#skips.add({ node: name, reason }));
    const breaks = this.#streamBreaks.add({ node: name });
    const counters = this.#attempts;
    const durations = this.#attemptDurations;
    const skipCounter = this.#skips;
    const breakCounter = this.#streamBreaks;
    // Counter and histogram indexes are allocated in step, so one index serves both. A node
    // removed by a reload keeps recording into retired indexes that are no longer exported.
    const recorder: NodeMetrics = {
      attempt(outcome, seconds) {
        const index = attempts[outcome]!;
        counters.inc(index);
        durations.observe(index, seconds);
      },
      skip(reason) {
        skipCounter.inc(skips[reason]!);
      },
      streamBroken() {
        breakCounter.inc(breaks);
      },
      lagSkip(method) {
        chain.lagSkip(name, method);
      },
      staleAnswer(credits) {
        chain.staleAnswer(name, credits);
      },
    };
    const series: NodeSeries = { recorder, attempts, skips, breaks, tier: undefined };
    this.#nodes.set(name, series);
    return series;
  }

  /** Stops exporting a removed node's series; returns them (undefined for an unknown node). */
  remove(name: string): NodeSeries | undefined {
    const series = this.#nodes.get(name);
    if (!series) return undefined;
    this.#nodes.delete(name);
    for (const index of series.attempts) {
      this.#attempts.remove(index);
      this.#attemptDurations.remove(index);
    }
    for (const index of series.skips) this.#skips.remove(index);
    this.#streamBreaks.remove(series.breaks);
    return series;
  }
}
