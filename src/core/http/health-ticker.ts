/**
 * The server's once-a-second look at its nodes: re-rank the table (latency EMAs move), publish
 * each node's health to the metrics, and log the transitions an operator cares about — a
 * penalty running out, and the whole fleet being penalized (requests then fail open).
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ProxyMetrics } from '../metrics.js';
import { HeadProber } from '../routing/head-probe.js';
import type { Topology } from '../routing/topology.js';
import { healthSamples } from './server-samples.js';

/** Ranks, publishes and logs node health on every `tick`. */
export class HealthTicker {
  /** Every node was penalized at the last tick (logged once per outage). */
  #allDown = false;
  /** Nodes penalized at the last tick. */
  readonly #down = new Set<string>();
  /** `head_probe_seconds` probes (none unless a node sets it). */
  readonly #probes = new HeadProber();

  constructor(
    private readonly topology: Topology,
    private readonly metrics: ProxyMetrics,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** A chain's `expect_chain`: which family a head probe asks in. */
    private readonly expectChain: (chain: string) => string | undefined = () => undefined,
  ) {}

  tick(): void {
    this.topology.rank();
    const now = this.clock.now();
    for (const slot of this.topology.slots())
      this.#probes.tick(slot.table.all, slot.state, this.expectChain(slot.name), now);
    const samples = healthSamples(this.topology.table.all, now);
    this.metrics.publishHealth(samples);
    this.#logPenaltyChanges(now);
    const healthy = samples.filter((sample) => sample.healthy).length;
    if (healthy === 0 && samples.length > 0 && !this.#allDown) {
      this.logger.error({ nodes: samples.length }, 'every node is penalized; requests fail open');
    }
    this.#allDown = healthy === 0 && samples.length > 0;
  }

  /** Logs nodes whose penalty ran out (a success clearing it is logged by the router). */
  #logPenaltyChanges(now: number): void {
    for (const node of this.topology.table.all) {
      if (node.penalty.isActive(now)) {
        this.#down.add(node.name);
      } else if (this.#down.delete(node.name) && node.penalty.until !== 0) {
        this.logger.info({ node: node.name }, 'node penalty over; back in rotation');
      }
    }
  }
}
