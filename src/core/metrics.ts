/**
 * Prometheus metrics, one prom-client Registry per server. Names, types and labels are
 * CascadeRPC's so dashboards and alerts move over unchanged, except that durations are real
 * histograms (aggregatable across replicas) and quota gauges are read live at scrape time.
 *
 * This module holds the names, label values and the interface the request path records
 * through; prom-metrics.ts implements it with prom-client.
 *
 * Every series a dashboard plots exists from the moment its subject does: the four request
 * outcomes at construction, a node's attempt/duration/skip series when the node is built (at
 * 0, histograms with empty buckets), and they disappear when a reload removes the node. An
 * unmetered node's threshold renders as `+Inf` (valid exposition; `x < +Inf` filters it out in
 * PromQL) and an unmeasured latency EMA as `NaN`.
 */

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

/** Routing strategies (label `strategy` of cascade_strategy_attempts_total), config order. */
export const STRATEGY_LABELS = ['cost', 'latency'] as const;

/** What happened to hedges (label `event` of cascade_hedges_total). */
export const HEDGE_EVENTS = ['sent', 'won', 'cancelled'] as const;
/** Index into HEDGE_EVENTS. */
export const HedgeEvent = { sent: 0, won: 1, cancelled: 2 } as const;

/** How writes ended (label `outcome` of cascade_write_outcomes_total). */
export const WRITE_OUTCOMES = ['sent', 'already_known_as_success', 'failed'] as const;
/** Index into WRITE_OUTCOMES. */
export const WriteOutcome = { sent: 0, alreadyKnownAsSuccess: 1, failed: 2 } as const;

/** How the cache met a request (label `result` of rpc_cache_requests_total). */
export const CACHE_RESULTS = ['hit', 'miss', 'coalesced', 'bypass'] as const;
/** Index into CACHE_RESULTS. */
export const CacheResult = { hit: 0, miss: 1, coalesced: 2, bypass: 3 } as const;

/** The cache's size as read at scrape time. */
export interface CacheSample {
  readonly bytes: number;
  readonly entries: number;
}

/** What the cache and coalescing record. */
export interface CacheMetrics {
  /** Creates `method`'s four result series at 0 (once); returns its series handle. */
  method(name: string): number;
  /** Counts one request of series `series` with `result` (a CacheResult). */
  count(series: number, result: number): void;
  /** Credits the first-choice node would have charged for an answer the cache or a flight gave. */
  saved(node: string, credits: number): void;
  /** Registers the live source of rpc_cache_bytes and rpc_cache_entries. */
  setSource(source: () => CacheSample): void;
}

/** Cache recorders that record nothing. */
export const NOOP_CACHE_METRICS: CacheMetrics = {
  method: () => 0,
  count: () => {},
  saved: () => {},
  setSource: () => {},
};

/** Seconds: 0.1 ms to 1 s, the range between a loopback answer and the request budget. */
export const DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/** Pre-resolved per-node recorders used on the request path. */
export interface NodeMetrics {
  attempt(outcome: number, seconds: number): void;
  skip(reason: number): void;
  /** A streamed answer the upstream broke off after the client had its first bytes. */
  streamBroken(): void;
  /** The node was passed over for `method` because it is behind (rpc_lag_skips_total). */
  lagSkip?(method: string): void;
  /** An answer too stale to relay was retried elsewhere; it cost `credits` (rpc_stale_*). */
  staleAnswer?(credits: number): void;
}

/** A node's chain state at scrape time (rpc_node_head, rpc_node_lag). */
export interface ChainSample {
  readonly node: string;
  readonly heads: Readonly<Record<string, number>>;
  /** -1: unknown. */
  readonly lag: number;
}

/** A node's state as the ranking tick publishes it. */
export interface NodeHealthSample {
  readonly name: string;
  readonly tier: number;
  readonly healthy: boolean;
  /** Latency EMA in seconds; NaN when unmeasured. */
  readonly emaSeconds: number;
  /** An operator took the node out of rotation (rpc_node_cordoned). */
  readonly cordoned?: boolean;
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

/**
 * The stream kinds a WebSocket gap fill can close (ws/gap-fill.ts): the `kind` label values
 * of the gap-fill series, all shown from 0.
 */
export const GAP_FILL_KINDS = ['signature', 'newHeads', 'evmLogs', 'account'] as const;

/** The WebSocket side as /metrics shows it, read at scrape time (core/ws builds it). */
export interface WsSnapshot {
  readonly clientConnections: number;
  /** Client subscriptions (a client holding one twice counts twice). */
  readonly clientSubscriptions: number;
  /** Upstream subscriptions (one per shared subscription placed on a node). */
  readonly upstreamSubscriptions: number;
  /** Notification messages sent to clients. */
  readonly delivered: number;
  readonly slowClientCloses: number;
  /** Clients closed with 1013 because no node could serve a subscription. */
  readonly noNodeCloses: number;
  /** Upgrades refused, by reason. */
  readonly rejectedUpgrades: ReadonlyArray<readonly [string, number]>;
  /** Gap fills run, by stream kind. */
  readonly gapFills: ReadonlyArray<readonly [string, number]>;
  readonly gapFillNotifications: number;
  /** One entry per configured node (all at 0 before any WebSocket traffic). */
  readonly nodes: ReadonlyArray<{
    readonly name: string;
    readonly sockets: number;
    readonly subscriptions: number;
    readonly notifications: number;
    readonly bytes: number;
    /** Subscriptions moved off the node, by reason. */
    readonly failovers: ReadonlyArray<readonly [string, number]>;
  }>;
}

/** How this process coordinates with the others (workers, replicas), read at scrape time. */
export interface ClusterSample {
  /** Processes sharing the limits (replicas through Redis). */
  readonly members: number;
  /** Redis answering (always true without Redis). */
  readonly redisUp: boolean;
  /** Failed syncs since start. */
  readonly errors: number;
  /** Seconds since the last successful sync. */
  readonly syncAgeSeconds: number;
  /** This process's share of each node's limits. */
  readonly shares: ReadonlyMap<string, { readonly rps: number; readonly concurrent: number }>;
  /** Credits booked here and not yet acknowledged by the shared store, per node. */
  readonly unflushed: ReadonlyMap<string, number>;
}

/** One chain's recorders (rpc_chain_requests_total), bound once when the chain is served. */
export interface ChainMetrics {
  /** One client request to the chain answered with `outcome` (a REQUEST_OUTCOMES index). */
  request(outcome: number): void;
}

/** The node set and the provider accounts at scrape time (rpc_node_info, rpc_account_*). */
export interface TopologySample {
  readonly nodes: ReadonlyArray<{
    readonly name: string;
    readonly chain: string;
    /** undefined: billed to no account (the label is then empty). */
    readonly account: string | undefined;
    readonly tier: number;
  }>;
  readonly accounts: ReadonlyArray<{
    readonly name: string;
    readonly used: number;
    /** `monthly_limit`; Infinity when unmetered (rendered `+Inf`). */
    readonly quota: number;
    /** Infinity when unmetered (rendered `+Inf`). */
    readonly threshold: number;
  }>;
}

/** What eth_getLogs splitting records (issue 29). */
export interface LogsMetrics {
  /** A client eth_getLogs was split (rpc_logs_split_requests_total). */
  split(): void;
  /** One chunk of a split was answered by `node` ('cache' for a stored chunk). */
  chunk(node: string): void;
}

/** A node's eth_getLogs limits its errors taught, read at scrape time (rpc_logs_learned_limit). */
export interface LogsLimitSample {
  readonly node: string;
  readonly blockRange: number | undefined;
  readonly results: number | undefined;
}

/** Everything the proxy records. */
export interface ProxyMetrics {
  request(outcome: number, seconds: number): void;
  sleepQueue(delta: 1 | -1): void;
  batchSize(elements: number): void;
  /** An attempt sent for a request routed by the strategy at `strategy` (STRATEGY_LABELS). */
  strategyAttempt(strategy: number): void;
  /** A hedge was sent, won the race, or was cancelled (HEDGE_EVENTS index). */
  hedge(event: number): void;
  /** A write ended (WRITE_OUTCOMES index). */
  write(outcome: number): void;
  /** Creates (or returns) the recorders of a node and its zero-valued series. */
  forNode(name: string): NodeMetrics;
  /** Drops every series of a node removed by a reload. */
  removeNode(name: string): void;
  publishHealth(samples: readonly NodeHealthSample[]): void;
  /** Registers the live source of the quota gauges. */
  setQuotaSource(source: () => readonly QuotaSample[]): void;
  /** Registers the live source of the WebSocket series (absent: metrics without them). */
  setWsSource?(source: () => WsSnapshot): void;
  /** Registers the live source of rpc_node_head / rpc_node_lag (absent: not exported). */
  setChainSource?(source: () => readonly ChainSample[]): void;
  /** Registers the live source of the cluster gauges (only when coordinating with others). */
  setClusterSource(source: () => ClusterSample): void;
  /** Registers the live source of the client-key series (only when keys are on). */
  setKeySource?(source: () => readonly KeySample[]): void;
  /** Creates (or returns) a chain's recorders and its zero-valued series. */
  forChain?(name: string): ChainMetrics;
  /** Drops the series of a chain a reload removed. */
  removeChain?(name: string): void;
  /** Registers the live source of rpc_node_info and the account gauges. */
  setTopologySource?(source: () => TopologySample): void;
  /** The cache's recorders; absent = record nothing. */
  readonly cache?: CacheMetrics;
  /** eth_getLogs splitting's recorders; absent = record nothing. */
  readonly logs?: LogsMetrics;
  /** Registers the live source of rpc_logs_learned_limit (absent: not exported). */
  setLogsSource?(source: () => readonly LogsLimitSample[]): void;
  /** Prometheus text exposition. */
  render(): Promise<string>;
  /**
   * Every series as data, for the `--workers` primary to add up (see `addUpSeries`); absent
   * where there is nothing to add up.
   */
  series?(): Promise<SeriesSnapshot>;
  readonly contentType: string;
}

/** One registry's series as data (opaque outside the metrics implementation). */
export type SeriesSnapshot = readonly object[];

/** One client key at scrape time (`name` "" = calls with no usable key). */
export interface KeySample {
  readonly name: string;
  /** Calls by outcome: `allowed`, or a refusal reason. */
  readonly counts: ReadonlyMap<string, number>;
  readonly used: number;
  readonly budget: number | undefined;
}

/** Recorders that record nothing. */
export const NOOP_NODE: NodeMetrics = { attempt: () => {}, skip: () => {}, streamBroken: () => {} };

/** Metrics that record nothing (enable_metrics = false). */
export const NOOP_METRICS: ProxyMetrics = {
  request: () => {},
  sleepQueue: () => {},
  batchSize: () => {},
  strategyAttempt: () => {},
  hedge: () => {},
  write: () => {},
  forNode: () => NOOP_NODE,
  removeNode: () => {},
  publishHealth: () => {},
  setQuotaSource: () => {},
  setClusterSource: () => {},
  render: () => Promise.resolve(''),
  contentType: 'text/plain; charset=utf-8',
};

/** Build identity for `cascade_build_info`. */
export interface BuildInfo {
  readonly version: string;
}
