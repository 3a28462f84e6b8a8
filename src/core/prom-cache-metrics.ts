/**
 * The cache's series: `rpc_cache_requests_total{method,result}` (an indexed counter: one array
 * store per request), `rpc_credits_saved_total{node}`, and the `rpc_cache_bytes` /
 * `rpc_cache_entries` gauges read at scrape time. Method labels are only the methods the
 * policy names plus `other`, so a client cannot blow up the label set.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { IndexedCounter } from './indexed-series.js';
import { CACHE_RESULTS, type CacheMetrics, type CacheSample } from './metrics.js';

/** The cache's recorders, plus the per-node series' lifecycle. */
export class PromCacheMetrics implements CacheMetrics {
  readonly #requests: IndexedCounter;
  readonly #saved: Counter<string>;
  readonly #savedByNode = new Map<string, Counter.Internal>();
  /** Each method's first series index (its four results follow it). */
  readonly #series = new Map<string, number>();
  #source: () => CacheSample = () => ({ bytes: 0, entries: 0 });

  constructor(registry: Registry) {
    const registers = [registry];
    this.#requests = new IndexedCounter(
      'rpc_cache_requests_total',
      'Requests the response cache and in-flight coalescing saw, by how they were answered',
      registry,
    );
    this.#saved = new Counter({
      name: 'rpc_credits_saved_total',
      help: 'Credits the first-choice node would have charged for answers the cache or coalescing gave',
      labelNames: ['node'],
      registers,
    });
    const source = (): CacheSample => this.#source();
    new Gauge({
      name: 'rpc_cache_bytes',
      help: 'Bytes the response cache holds (answers, keys and per-entry overhead)',
      registers,
      aggregator: 'sum',
      collect() {
        this.set(source().bytes);
      },
    });
    new Gauge({
      name: 'rpc_cache_entries',
      help: 'Answers the response cache holds',
      registers,
      aggregator: 'sum',
      collect() {
        this.set(source().entries);
      },
    });
    this.method('other');
  }

  method(name: string): number {
    const known = this.#series.get(name);
    if (known !== undefined) return known;
    const first = this.#requests.add({ method: name, result: CACHE_RESULTS[0] });
    for (const result of CACHE_RESULTS.slice(1)) this.#requests.add({ method: name, result });
    this.#series.set(name, first);
    return first;
  }

  count(series: number, result: number): void {
    this.#requests.inc(series + result);
  }

  saved(node: string, credits: number): void {
    let child = this.#savedByNode.get(node);
    if (child === undefined) {
      child = this.#saved.labels(node);
      this.#savedByNode.set(node, child);
    }
    child.inc(credits);
  }

  setSource(source: () => CacheSample): void {
    this.#source = source;
  }

  /** Creates a node's saved-credits series at 0 (a dashboard plots it from the start). */
  addNode(node: string): void {
    this.saved(node, 0);
  }

  /** Drops a node's series when a reload removes the node. */
  removeNode(node: string): void {
    if (!this.#savedByNode.delete(node)) return;
    this.#saved.remove(node);
  }
}

/** The cache's recorders on `registry`. */
export function createCacheMetrics(registry: Registry): PromCacheMetrics {
  return new PromCacheMetrics(registry);
}
