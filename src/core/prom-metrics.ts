/**
 * The prom-client implementation of ProxyMetrics, one Registry per server. What the request
 * path records (requests, attempts, skips, durations, batch sizes) lives in indexed series —
 * one array store per record, rendered by the Registry at scrape time; gauges set by the
 * ranking tick and the quota gauges read at scrape time are ordinary prom-client gauges.
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { IndexedCounter, IndexedHistogram } from './indexed-series.js';
import { EMPTY_WS_SNAPSHOT, registerWsMetrics } from './prom-ws-metrics.js';
import {
  REQUEST_OUTCOMES,
  DURATION_BUCKETS,
  STRATEGY_LABELS,
  HEDGE_EVENTS,
  WRITE_OUTCOMES,
  type NodeMetrics,
  type NodeHealthSample,
  type QuotaSample,
  type ProxyMetrics,
  type BuildInfo,
  type WsSnapshot,
  type ClusterSample,
  type ChainSample,
  type KeySample,
  type ChainMetrics,
  type TopologySample,
  type LogsLimitSample,
  type SeriesSnapshot,
} from './metrics.js';
import { ChainCounters } from './prom-chain-metrics.js';
import { LogsCounters } from './prom-logs-metrics.js';
import { createCacheMetrics, type PromCacheMetrics } from './prom-cache-metrics.js';
import { registerClusterGauges } from './prom-cluster-metrics.js';
import { registerKeyMetrics } from './prom-key-metrics.js';
import { NodeHealthGauges } from './prom-health-metrics.js';
import { NodeCounters } from './prom-node-metrics.js';
import { registerQuotaGauges } from './prom-quota-metrics.js';
import { ChainRequestCounters, registerTopologyGauges } from './prom-topology-metrics.js';

/** Default metrics `promtool check metrics` rejects (a counter-style name on a gauge). */
const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** A prom-client backed ProxyMetrics with its own Registry. */
export function createPromMetrics(build: BuildInfo): ProxyMetrics {
  return new PromMetrics(build);
}

type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
type ValueJson = MetricJson['values'][number] & { sharedLabels?: Record<string, string | number> };

/**
 * One metric of a worker's series, made fit for `AggregatorRegistry.aggregate`, which groups
 * by `labels` alone: the indexed histograms keep their series labels in `sharedLabels` (one
 * object for all buckets), so they are folded into each value's labels — else every node and
 * outcome would be summed into one series. And an averaged gauge drops a NaN (a node this
 * worker has not measured yet): it would make the fleet's average NaN.
 */
function forAddingUp(metric: MetricJson): MetricJson {
  const averaged = (metric as { aggregator?: string }).aggregator === 'average';
  const values: ValueJson[] = [];
  for (const value of metric.values as ValueJson[]) {
    if (averaged && Number.isNaN(value.value)) continue;
    const { sharedLabels, ...rest } = value;
    values.push(sharedLabels ? { ...rest, labels: { ...value.labels, ...sharedLabels } } : value);
  }
  return { ...metric, values };
}

/** prom-client prints NaN as "Nan"; the exposition format spells it NaN. */
export function spellNaN(text: string): string {
  return text.replace(/ Nan$/gm, ' NaN');
}

class PromMetrics implements ProxyMetrics {
  readonly #registry = new Registry();
  readonly contentType: string;

  readonly #requests: IndexedCounter;
  readonly #requestDurations: IndexedHistogram;
  readonly #nodes: NodeCounters;
  readonly #sleepQueue: Gauge<string>;
  readonly #batchSize: IndexedHistogram;
  readonly #strategyAttempts: IndexedCounter;
  readonly #hedges: IndexedCounter;
  readonly #writes: IndexedCounter;
  readonly #health: NodeHealthGauges;
  #quotaSource: () => readonly QuotaSample[] = () => [];
  readonly cache: PromCacheMetrics;
  #wsSource: () => WsSnapshot = () => EMPTY_WS_SNAPSHOT;
  #keysRegistered = false;
  #clusterRegistered = false;
  #chainSource: () => readonly ChainSample[] = () => [];
  readonly #chain: ChainCounters;
  readonly #chainRequests: ChainRequestCounters;
  #topologySource: (() => TopologySample) | undefined;
  readonly logs: LogsCounters;

  constructor(build: BuildInfo) {
    const registers = [this.#registry];
    this.contentType = this.#registry.contentType;
    collectDefaultMetrics({ register: this.#registry });
    // Gauges named like counters fail `promtool check metrics`; each is the sum of the
    // per-type gauge prom-client also exports (nodejs_active_handles{type} …).
    for (const name of LINT_FAILING_DEFAULTS) this.#registry.removeSingleMetric(name);
    new Gauge({
      name: 'cascade_build_info',
      help: 'cascade version and the Node.js runtime it runs on',
      labelNames: ['version', 'node_version'],
      registers,
      aggregator: 'first',
    }).set({ version: build.version, node_version: process.version }, 1);
    const registry = this.#registry;
    this.#requests = new IndexedCounter(
      'rpc_requests_total',
      'Client requests handled by CascadeRPC',
      registry,
    );
    this.#requestDurations = new IndexedHistogram(
      'rpc_request_duration_seconds',
      'End-to-end CascadeRPC request duration',
      DURATION_BUCKETS,
      registry,
    );
    // Series index = outcome index: every outcome exists at 0 from startup.
    for (const outcome of REQUEST_OUTCOMES) {
      this.#requests.add({ outcome });
      this.#requestDurations.add({ outcome });
    }
    // Registered here, between the request and sleep-queue series, to keep /metrics' order.
    this.#nodes = new NodeCounters(registry);
    this.#sleepQueue = new Gauge({
      name: 'rpc_sleep_queue_size',
      help: 'Number of requests currently sleeping while all RPC nodes are rate-limited',
      registers,
    });
    this.#batchSize = new IndexedHistogram(
      'rpc_batch_size',
      'Elements per JSON-RPC batch request',
      [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registry,
    );
    this.#batchSize.add({});
    // Series index = label index, every series at 0 from startup.
    this.#strategyAttempts = new IndexedCounter(
      'cascade_strategy_attempts_total',
      'Upstream attempts of requests and batch elements, by the routing strategy of their method',
      registry,
    );
    for (const strategy of STRATEGY_LABELS) this.#strategyAttempts.add({ strategy });
    this.#hedges = new IndexedCounter(
      'cascade_hedges_total',
      'Hedged reads: second attempts sent, won (answered first) and cancelled (lost the race)',
      registry,
    );
    for (const event of HEDGE_EVENTS) this.#hedges.add({ event });
    this.#writes = new IndexedCounter(
      'cascade_write_outcomes_total',
      'Write requests by how they ended',
      registry,
    );
    for (const outcome of WRITE_OUTCOMES) this.#writes.add({ outcome });
    this.#health = new NodeHealthGauges(registry);
    registerQuotaGauges(registry, () => this.#quotaSource());
    this.cache = createCacheMetrics(registry);
    registerWsMetrics(registry, () => this.#wsSource());
    this.#chain = new ChainCounters(registry, () => this.#chainSource());
    this.#chainRequests = new ChainRequestCounters(registry);
    registerTopologyGauges(registry, () => this.#topologySource?.());
    this.logs = new LogsCounters(registry);
  }

  request(outcome: number, seconds: number): void {
    this.#requests.inc(outcome);
    this.#requestDurations.observe(outcome, seconds);
  }

  sleepQueue(delta: 1 | -1): void {
    this.#sleepQueue.inc(delta);
  }

  batchSize(elements: number): void {
    this.#batchSize.observe(0, elements);
  }

  strategyAttempt(strategy: number): void {
    this.#strategyAttempts.inc(strategy);
  }

  hedge(event: number): void {
    this.#hedges.inc(event);
  }

  write(outcome: number): void {
    this.#writes.inc(outcome);
  }

  forNode(name: string): NodeMetrics {
    const existing = this.#nodes.byName.get(name);
    if (existing) return existing.recorder;
    const chain = this.#chain;
    const series = this.#nodes.add(name, chain);
    chain.addNode(name);
    this.logs.addNode(name);
    this.cache.addNode(name);
    return series.recorder;
  }

  removeNode(name: string): void {
    const series = this.#nodes.remove(name);
    if (!series) return;
    this.cache.removeNode(name);
    this.#chain.removeNode(name);
    this.logs.removeNode(name);
    this.#health.remove(name, series);
  }

  publishHealth(samples: readonly NodeHealthSample[]): void {
    this.#health.publish(samples, this.#nodes.byName);
  }

  setQuotaSource(source: () => readonly QuotaSample[]): void {
    this.#quotaSource = source;
  }

  setChainSource(source: () => readonly ChainSample[]): void {
    this.#chainSource = source;
  }

  forChain(name: string): ChainMetrics {
    return this.#chainRequests.forChain(name);
  }

  removeChain(name: string): void {
    this.#chainRequests.remove(name);
  }

  setTopologySource(source: () => TopologySample): void {
    this.#topologySource = source;
  }

  setLogsSource(source: () => readonly LogsLimitSample[]): void {
    this.logs.setSource(source);
  }

  setWsSource(source: () => WsSnapshot): void {
    this.#wsSource = source;
  }

  setKeySource(source: () => readonly KeySample[]): void {
    if (this.#keysRegistered) return;
    this.#keysRegistered = true;
    registerKeyMetrics(this.#registry, source);
  }

  setClusterSource(source: () => ClusterSample): void {
    if (this.#clusterRegistered) return;
    this.#clusterRegistered = true;
    registerClusterGauges(this.#registry, source);
  }

  async render(): Promise<string> {
    return spellNaN(await this.#registry.metrics());
  }

  async series(): Promise<SeriesSnapshot> {
    return (await this.#registry.getMetricsAsJSON()).map(forAddingUp);
  }
}
