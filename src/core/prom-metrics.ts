/**
 * The prom-client implementation of ProxyMetrics, one Registry per server. The request path
 * never touches the registry: labelled children are resolved once per node (or outcome) into
 * arrays, so recording is an index plus prom-client's increment.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import {
  REQUEST_OUTCOMES,
  ATTEMPT_OUTCOMES,
  SKIP_REASONS,
  DURATION_BUCKETS,
  NOOP_NODE,
  type NodeMetrics,
  type NodeHealthSample,
  type QuotaSample,
  type ProxyMetrics,
  type BuildInfo,
} from './metrics.js';

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

interface NodeSeries {
  recorder: NodeMetrics;
  tier: string | undefined;
  /** False once a reload removed the node. */
  live: boolean;
}

class PromMetrics implements ProxyMetrics {
  readonly #registry = new Registry();
  readonly contentType: string;
  readonly #requests: Counter.Internal[];
  readonly #requestDurations: Histogram.Internal<string>[];
  readonly #attempts: Counter<string>;
  readonly #attemptDurations: Histogram<string>;
  readonly #skips: Counter<string>;
  readonly #sleepQueue: Gauge<string>;
  readonly #batchSize: Histogram<string>;
  readonly #nodeHealthy: Gauge<string>;
  readonly #healthyNodes: Gauge<string>;
  readonly #latencyEma: Gauge<string>;
  readonly #nodes = new Map<string, NodeSeries>();
  #quotaSource: () => readonly QuotaSample[] = () => [];

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
    }).set({ version: build.version, node_version: process.version }, 1);
    const requests = new Counter({
      name: 'rpc_requests_total',
      help: 'Client requests handled by CascadeRPC',
      labelNames: ['outcome'],
      registers,
    });
    const requestDuration = new Histogram({
      name: 'rpc_request_duration_seconds',
      help: 'End-to-end CascadeRPC request duration',
      labelNames: ['outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#requests = REQUEST_OUTCOMES.map((outcome) => requests.labels(outcome));
    this.#requestDurations = REQUEST_OUTCOMES.map((outcome) => requestDuration.labels(outcome));
    for (const child of this.#requests) child.inc(0);
    for (const outcome of REQUEST_OUTCOMES) requestDuration.zero({ outcome });
    this.#attempts = new Counter({
      name: 'rpc_upstream_attempts_total',
      help: 'Attempts sent to upstream RPC nodes',
      labelNames: ['node', 'outcome'],
      registers,
    });
    this.#attemptDurations = new Histogram({
      name: 'rpc_upstream_duration_seconds',
      help: 'Upstream RPC attempt duration',
      labelNames: ['node', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#skips = new Counter({
      name: 'rpc_upstream_skips_total',
      help: 'Nodes passed over without sending a request',
      labelNames: ['node', 'reason'],
      registers,
    });
    this.#sleepQueue = new Gauge({
      name: 'rpc_sleep_queue_size',
      help: 'Number of requests currently sleeping while all RPC nodes are rate-limited',
      registers,
    });
    this.#batchSize = new Histogram({
      name: 'rpc_batch_size',
      help: 'Elements per JSON-RPC batch request',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers,
    });
    this.#nodeHealthy = new Gauge({
      name: 'rpc_node_healthy',
      help: 'Whether an RPC node is free of penalties from its recent traffic',
      labelNames: ['node', 'tier'],
      registers,
    });
    this.#healthyNodes = new Gauge({
      name: 'rpc_healthy_nodes',
      help: 'Number of RPC nodes not currently serving a penalty',
      registers,
    });
    this.#latencyEma = new Gauge({
      name: 'rpc_node_latency_ema_seconds',
      help: "Moving average of an RPC node's answered attempts",
      labelNames: ['node', 'tier'],
      registers,
    });
    this.#registerQuotaGauges(registers);
  }

  #registerQuotaGauges(registers: Registry[]): void {
    const source = (): readonly QuotaSample[] => this.#quotaSource();
    new Gauge({
      name: 'rpc_node_quota_used',
      help: 'Usage a node has booked in the current billing period',
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const sample of source()) this.set({ node: sample.name }, sample.used);
      },
    });
    new Gauge({
      name: 'rpc_node_quota_threshold',
      help: 'Usage past which the router stops routing to a node',
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const sample of source()) this.set({ node: sample.name }, sample.threshold);
      },
    });
    new Gauge({
      name: 'rpc_node_quota_period_end_timestamp_seconds',
      help: "When a node's current billing period ends (its next reset, 00:00 UTC), Unix time",
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const sample of source()) {
          if (sample.periodEnd !== undefined) this.set({ node: sample.name }, sample.periodEnd);
        }
      },
    });
  }

  request(outcome: number, seconds: number): void {
    this.#requests[outcome]!.inc();
    this.#requestDurations[outcome]!.observe(seconds);
  }

  sleepQueue(delta: 1 | -1): void {
    this.#sleepQueue.inc(delta);
  }

  batchSize(elements: number): void {
    this.#batchSize.observe(elements);
  }

  forNode(name: string): NodeMetrics {
    const existing = this.#nodes.get(name);
    if (existing) return existing.recorder;
    const attempts = ATTEMPT_OUTCOMES.map((outcome) => this.#attempts.labels(name, outcome));
    const durations = ATTEMPT_OUTCOMES.map((o) => this.#attemptDurations.labels(name, o));
    const skips = SKIP_REASONS.map((reason) => this.#skips.labels(name, reason));
    // Touch every child so each series exists at 0 from startup.
    for (const child of attempts) child.inc(0);
    for (const outcome of ATTEMPT_OUTCOMES) this.#attemptDurations.zero({ node: name, outcome });
    for (const child of skips) child.inc(0);
    const series: NodeSeries = { recorder: NOOP_NODE, tier: undefined, live: true };
    // prom-client children re-create a removed series when used again: an attempt still in
    // flight on a node a reload removed must not bring its series back.
    series.recorder = {
      attempt(outcome, seconds) {
        if (!series.live) return;
        attempts[outcome]!.inc();
        durations[outcome]!.observe(seconds);
      },
      skip(reason) {
        if (series.live) skips[reason]!.inc();
      },
    };
    this.#nodes.set(name, series);
    return series.recorder;
  }

  removeNode(name: string): void {
    const series = this.#nodes.get(name);
    if (!series) return;
    series.live = false;
    this.#nodes.delete(name);
    for (const outcome of ATTEMPT_OUTCOMES) {
      this.#attempts.remove(name, outcome);
      this.#attemptDurations.remove(name, outcome);
    }
    for (const reason of SKIP_REASONS) this.#skips.remove(name, reason);
    if (series.tier !== undefined) {
      this.#nodeHealthy.remove(name, series.tier);
      this.#latencyEma.remove(name, series.tier);
    }
  }

  publishHealth(samples: readonly NodeHealthSample[]): void {
    let healthy = 0;
    for (const sample of samples) {
      const tier = String(sample.tier);
      const series = this.#nodes.get(sample.name);
      if (series && series.tier !== tier) {
        // A reload moved the node to another tier: drop the series under the old label.
        if (series.tier !== undefined) {
          this.#nodeHealthy.remove(sample.name, series.tier);
          this.#latencyEma.remove(sample.name, series.tier);
        }
        series.tier = tier;
      }
      this.#nodeHealthy.labels(sample.name, tier).set(sample.healthy ? 1 : 0);
      this.#latencyEma.labels(sample.name, tier).set(sample.emaSeconds);
      if (sample.healthy) healthy++;
    }
    this.#healthyNodes.set(healthy);
  }

  setQuotaSource(source: () => readonly QuotaSample[]): void {
    this.#quotaSource = source;
  }

  async render(): Promise<string> {
    // prom-client prints NaN as "Nan"; the exposition format spells it NaN.
    return (await this.#registry.metrics()).replace(/ Nan$/gm, ' NaN');
  }
}
