/**
 * The eth_getLogs series (issue 29): requests split, chunks answered per node, and the limits
 * nodes' own errors taught, read live at scrape time.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LogsLimitSample, LogsMetrics } from './metrics.js';

/** prom-client recorders of eth_getLogs splitting. */
export class LogsCounters implements LogsMetrics {
  readonly #splits: Counter<string>;
  readonly #chunks: Counter<string>;
  #source: () => readonly LogsLimitSample[] = () => [];

  constructor(registry: Registry) {
    const registers = [registry];
    this.#splits = new Counter({
      name: 'rpc_logs_split_requests_total',
      help: 'Client eth_getLogs requests whose block range was split into chunks that fit a node',
      registers,
    });
    this.#splits.inc(0);
    this.#chunks = new Counter({
      name: 'rpc_logs_chunks_total',
      help: 'Chunks of split eth_getLogs requests, by the node that answered them (cache: stored)',
      labelNames: ['node'],
      registers,
    });
    const source = () => this.#source();
    new Gauge({
      name: 'rpc_logs_learned_limit',
      help: "eth_getLogs limits a node's own errors taught: blocks per query, logs per answer",
      labelNames: ['node', 'kind'],
      registers,
      aggregator: 'min',
      collect() {
        this.reset();
        for (const sample of source()) {
          if (sample.blockRange !== undefined)
            this.set({ node: sample.node, kind: 'block_range' }, sample.blockRange);
          if (sample.results !== undefined)
            this.set({ node: sample.node, kind: 'results' }, sample.results);
        }
      },
    });
  }

  /** Where the learned limits are read from. */
  setSource(source: () => readonly LogsLimitSample[]): void {
    this.#source = source;
  }

  /** Creates a node's chunk counter at 0. */
  addNode(name: string): void {
    this.#chunks.labels(name).inc(0);
  }

  removeNode(name: string): void {
    this.#chunks.remove(name);
  }

  split(): void {
    this.#splits.inc();
  }

  chunk(node: string): void {
    this.#chunks.labels(node).inc();
  }
}
