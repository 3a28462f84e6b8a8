/**
 * The node health gauges the ranking tick sets: healthy or penalized, how many are healthy,
 * latency EMA and cordon. Health and latency carry the node's tier as a label, so a reload that
 * moves a node to another tier drops its series under the old label.
 */
import { Gauge, type Registry } from 'prom-client';
import type { NodeHealthSample } from './metrics.js';

/** The tier label a node's health series carry now (undefined before the first publish). */
export interface TierLabel {
  tier: string | undefined;
}

/** rpc_node_healthy, rpc_healthy_nodes, rpc_node_latency_ema_seconds and rpc_node_cordoned. */
export class NodeHealthGauges {
  readonly #nodeHealthy: Gauge<string>;
  readonly #healthyNodes: Gauge<string>;
  readonly #latencyEma: Gauge<string>;
  readonly #cordoned: Gauge<string>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#nodeHealthy = new Gauge({
      name: 'rpc_node_healthy',
      help: 'Whether an RPC node is free of penalties from its recent traffic',
      labelNames: ['node', 'tier'],
      registers,
      aggregator: 'min',
    });
    this.#healthyNodes = new Gauge({
      name: 'rpc_healthy_nodes',
      help: 'Number of RPC nodes not currently serving a penalty',
      registers,
      aggregator: 'min',
    });
    this.#latencyEma = new Gauge({
      name: 'rpc_node_latency_ema_seconds',
      help: "Moving average of an RPC node's answered attempts",
      labelNames: ['node', 'tier'],
      registers,
      aggregator: 'average',
    });
    this.#cordoned = new Gauge({
      name: 'rpc_node_cordoned',
      help: 'Whether an operator cordoned an RPC node (it takes no new requests)',
      labelNames: ['node'],
      registers,
      aggregator: 'max',
    });
  }

  /** Sets the gauges from the tick's samples; `labels` holds each known node's tier label. */
  publish(samples: readonly NodeHealthSample[], labels: ReadonlyMap<string, TierLabel>): void {
    let healthy = 0;
    for (const sample of samples) {
      const tier = String(sample.tier);
      const series = labels.get(sample.name);
      if (series && series.tier !== tier) {
        // A reload moved the node to another tier: drop the series under the old label.
        if (series.tier !== undefined) this.#removeTiered(sample.name, series.tier);
        series.tier = tier;
      }
      this.#nodeHealthy.labels(sample.name, tier).set(sample.healthy ? 1 : 0);
      this.#latencyEma.labels(sample.name, tier).set(sample.emaSeconds);
      this.#cordoned.labels(sample.name).set(sample.cordoned === true ? 1 : 0);
      if (sample.healthy) healthy++;
    }
    this.#healthyNodes.set(healthy);
  }

  /** Drops the series of a node removed by a reload. */
  remove(name: string, label: TierLabel): void {
    this.#cordoned.remove(name);
    if (label.tier !== undefined) this.#removeTiered(name, label.tier);
  }

  #removeTiered(name: string, tier: string): void {
    this.#nodeHealthy.remove(name, tier);
    this.#latencyEma.remove(name, tier);
  }
}
