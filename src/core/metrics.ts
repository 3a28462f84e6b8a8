/**
 * Prometheus metrics, one prom-client Registry per server. Names, types and labels are
 * CascadeRPC's so dashboards and alerts move over unchanged, except that durations are real
 * histograms (aggregatable across replicas) and quota gauges are read live at scrape time.
 *
 * The request path never touches the registry: every labelled child is resolved once per
 * node (or outcome) into arrays, and recording is an index plus an increment.
 *
 * Every series a dashboard plots exists from the moment its subject does: the four request
 * outcomes at construction, a node's attempt/duration/skip series when the node is built (at
 * 0, histograms with empty buckets), and they disappear when a reload removes the node. An
 * unmetered node's threshold renders as `+Inf` (valid exposition; `x < +Inf` filters it out in
 * PromQL) and an unmeasured latency EMA as `NaN`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Client-facing request outcomes (label `outcome` of rpc_requests_total). */
export const REQUEST_OUTCOMES = ['forwarded', 'bad_request', 'bad_gateway', 'timeout'] as const;
/** Index into REQUEST_OUTCOMES. */
export const RequestOutcome = { forwarded: 0, badRequest: 1, badGateway: 2, timeout: 3 } as const;

/** Upstream attempt outcomes (label `outcome` of rpc_upstream_attempts_total). */
export const ATTEMPT_OUTCOMES = [
  'success',
  'forwarded_http_error',
  'forwarded_rpc_error',
  'retryable_rpc_error',
  'invalid_json',
  'body_error',
  'transport_error',
] as const;
/** Index into ATTEMPT_OUTCOMES. */
export const AttemptOutcome = {
  success: 0,
  forwardedHttpError: 1,
  forwardedRpcError: 2,
  retryableRpcError: 3,
  invalidJson: 4,
  bodyError: 5,
  transportError: 6,
} as const;

/** Why a node was passed over (label `reason` of rpc_upstream_skips_total). */
export const SKIP_REASONS = [
  'rate_limit',
  'quota_exhausted',
  'method_unsupported',
  'saturated',
  'penalized',
] as const;
/** Index into SKIP_REASONS. */
export const SkipReason = {
  rateLimit: 0,
  quotaExhausted: 1,
  methodUnsupported: 2,
  saturated: 3,
  penalized: 4,
} as const;

/** Seconds: 0.1 ms to 1 s, the range between a loopback answer and the request budget. */
export const DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Pre-resolved per-node recorders used on the request path. */
export interface NodeMetrics {
  attempt(outcome: number, seconds: number): void;
  skip(reason: number): void;
}

/** A node's state as the ranking tick publishes it. */
export interface NodeHealthSample {
  readonly name: string;
  readonly tier: number;
  readonly healthy: boolean;
  /** Latency EMA in seconds; NaN when unmeasured. */
  readonly emaSeconds: number;
}

/** A node's usage as read at scrape time. */
export interface QuotaSample {
  readonly name: string;
  readonly used: number;
  /** Infinity when unmetered (rendered `+Inf`). */
  readonly threshold: number;
  /**
   * When the current billing period ends (the next reset, 00:00 UTC), in Unix seconds. Omitted
   * ⇒ no `rpc_node_quota_period_end_timestamp_seconds` series for the node.
   */
  readonly periodEnd?: number;
}

/** Everything the proxy records. */
export interface ProxyMetrics {
  request(outcome: number, seconds: number): void;
  sleepQueue(delta: 1 | -1): void;
  batchSize(elements: number): void;
  /** Creates (or returns) the recorders of a node and its zero-valued series. */
  forNode(name: string): NodeMetrics;
  /** Drops every series of a node removed by a reload. */
  removeNode(name: string): void;
  publishHealth(samples: readonly NodeHealthSample[]): void;
  /** Registers the live source of the quota gauges. */
  setQuotaSource(source: () => readonly QuotaSample[]): void;
  /** Prometheus text exposition. */
  render(): Promise<string>;
  readonly contentType: string;
}

const NOOP_NODE: NodeMetrics = { attempt: () => {}, skip: () => {} };

/** Metrics that record nothing (enable_metrics = false). */
export const NOOP_METRICS: ProxyMetrics = {
  request: () => {},
  sleepQueue: () => {},
  batchSize: () => {},
  forNode: () => NOOP_NODE,
  removeNode: () => {},
  publishHealth: () => {},
  setQuotaSource: () => {},
  render: () => Promise.resolve(''),
  contentType: 'text/plain; charset=utf-8',
};

/** Build identity for `cascade_build_info`. */
export interface BuildInfo {
  readonly version: string;
}

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
