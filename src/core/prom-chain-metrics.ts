/**
 * The chain-state series (issue 26): heads and lag read live at scrape time, and the counters
 * of what lag-aware routing did — nodes passed over for lag, stale answers retried and the
 * credits those cost.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ChainSample } from './metrics.js';

export class ChainCounters {
  readonly #skips: Counter<string>;
  readonly #stale: Counter<string>;
  readonly #staleCredits: Counter<string>;

  constructor(registry: Registry, source: () => readonly ChainSample[]) {
    const registers = [registry];
    this.#skips = new Counter({
      name: 'rpc_lag_skips_total',
      help: 'Requests a node was passed over for because it is behind what the method tolerates',
      labelNames: ['node', 'method'],
      registers,
    });
    this.#stale = new Counter({
      name: 'rpc_stale_answers_total',
      help: 'Answers too far behind the chain head to relay, retried on a fresher node',
      labelNames: ['node'],
      registers,
    });
    this.#staleCredits = new Counter({
      name: 'rpc_stale_credits_total',
      help: 'Credits spent on stale answers that were not relayed',
      labelNames: ['node'],
      registers,
    });
    new Gauge({
      name: 'rpc_node_head',
      help: "A node's head (slot or block) as its answers showed it, by commitment",
      labelNames: ['node', 'commitment'],
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        for (const sample of source()) {
          for (const [commitment, head] of Object.entries(sample.heads)) {
            this.set({ node: sample.node, commitment }, head);
          }
        }
      },
    });
    new Gauge({
      name: 'rpc_node_lag',
      help: 'Slots or blocks a node is behind the head two nodes confirm (absent: unknown)',
      labelNames: ['node'],
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        for (const sample of source())
          if (sample.lag >= 0) this.set({ node: sample.node }, sample.lag);
      },
    });
  }

  /** Creates a node's counters at 0 (so dashboards see the series from the start). */
  addNode(name: string): void {
    this.#stale.labels(name).inc(0);
    this.#staleCredits.labels(name).inc(0);
  }

  removeNode(name: string): void {
    this.#stale.remove(name);
    this.#staleCredits.remove(name);
    this.#skips.remove({ node: name });
  }

  lagSkip(node: string, method: string): void {
    this.#skips.labels(node, method).inc();
  }

  staleAnswer(node: string, credits: number): void {
    this.#stale.labels(node).inc();
    if (credits > 0) this.#staleCredits.labels(node).inc(credits);
  }
}
