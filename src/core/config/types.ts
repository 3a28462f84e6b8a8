import type { ChainFields } from './chain-fields.js';
import type { KeysConfig } from './key-types.js';

/** One thing wrong (or suspicious) in a config or price-list file. */
export interface ConfigProblem {
  /** The file the problem is in. */
  readonly file: string;
  /** Exact key path, e.g. `nodes[2].rps_limit` or `routing.getBalanse`. Empty for the whole file. */
  readonly path: string;
  readonly message: string;
  /** How to fix it. */
  readonly hint?: string;
}

/** Where a node's price for a method comes from. */
export type PriceSource = 'routing' | 'custom' | 'unknown_method_cost';

/** Price-table value meaning "this node does not serve the method". */
export const UNPRICED = 0xffffffff;

/**
 * What a provider bills for WebSocket traffic (`[websocket]` of a price list), in credits. A
 * node whose list has no `[websocket]` table is never given subscriptions.
 */
export interface WsPrices {
  /** Per upstream connection opened. */
  readonly connection: number;
  /** Per subscribe call sent (failovers re-subscribe, and pay again). */
  readonly subscribe: number;
  /** Per unsubscribe call sent. */
  readonly unsubscribe: number;
  /** Per notification received. */
  readonly notification: number;
  /** Per 0.1 MB (100,000 bytes) received on the socket, answers and notifications alike. */
  readonly tenthMb: number;
}

/** A compiled provider price list. Shared by every node that names the same file. */
export interface PriceList {
  /** Absolute path of the file. */
  readonly path: string;
  /** Path as written in the config. */
  readonly configuredPath: string;
  readonly spilloverPercent: number;
  /** Price of any method the list does not name; undefined = not served. */
  readonly unknownMethodCost: number | undefined;
  /** Price by method id for the ids that existed when the list was compiled. */
  readonly table: Uint32Array;
  /** Names priced explicitly, with their source (for `cascade price`). */
  readonly named: ReadonlyMap<string, { readonly cost: number; readonly source: PriceSource }>;
  /** WebSocket prices; undefined = the provider's WebSocket is not used. */
  readonly websocket?: WsPrices | undefined;
  /** Most blocks the provider serves in one eth_getLogs (`[limits]`); undefined = unknown. */
  readonly maxLogsBlockRange?: number | undefined;
  /** Most logs the provider returns in one eth_getLogs answer; undefined = unknown. */
  readonly maxLogsResults?: number | undefined;
}

/** The `[server]` table, defaults applied. */
export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly enableMetrics: boolean;
  readonly maxBodyBytes: number;
  readonly quotasPath: string;
  readonly maxBatchSize: number;
  /** Separate loopback-only listener for /metrics; undefined = only on the main port. */
  readonly metricsPort: number | undefined;
  /** Loopback-only listener for admin routes (live quota numbers, resets); undefined = off. */
  readonly adminPort: number | undefined;
  /** Seconds between quotas.json writes (and billing-period checks). */
  readonly quotaFlushSeconds: number;
  /** Whole-request budget in ms (retries and waits included). */
  readonly requestTimeoutMs: number;
  /** Deadline of one upstream attempt in ms (connect, TLS, headers and body). */
  readonly attemptTimeoutMs: number;
  /** A second listener taking only WebSocket upgrades (web3.js looks at port + 1). */
  readonly wsPort?: number | undefined;
  /**
   * Set when `--port` moved `ws_port` along (to its port + 1): that port being taken is logged
   * and the main port serves WebSockets alone, instead of failing the start.
   */
  readonly wsPortBestEffort?: boolean;
  /** WebSocket connections one client IP may hold (more: the upgrade gets 429). */
  readonly wsMaxConnectionsPerIp?: number;
  /** Subscriptions one client connection may hold (more: an error answer). */
  readonly wsMaxSubscriptionsPerConnection?: number;
  /** Messages per second one client connection may send (burst = the limit). */
  readonly wsMaxMessagesPerSecond?: number;
  /** Bytes waiting to be written to one client before it is closed as too slow (1008). */
  readonly wsMaxBufferedBytes?: number;
  /** Origins whose pages may call cascade (`*` = any); empty = no CORS answers at all. */
  readonly corsOrigins: readonly string[];
  /** Answers of at least this many bytes are gzipped for clients that ask; 0 = never. */
  readonly compressionMinBytes: number;
  /** How long an idle client connection stays open, in ms. */
  readonly keepAliveTimeoutMs: number;
  /** Peers whose `X-Forwarded-For` is believed: IPs and CIDR ranges, as written. */
  readonly trustedProxies: readonly string[];
  /** Where the admin listener binds (loopback unless a token is set). */
  readonly adminHost: string;
  /** The environment variable holding the admin bearer token. */
  readonly adminTokenEnv: string;
  /** The admin bearer token (a secret); undefined = no token asked. */
  readonly adminToken: string | undefined;
  /** Answers carry x-cascade-node / -attempts / -credits (they disclose provider names). */
  readonly routingHeaders: boolean;
  /** Lag-aware routing (`max_lag`, `head_*`); absent = the shipped defaults. */
  readonly chain?: ChainFields;
  /** Refuse calls that carry no client key (`[[keys]]`); absent = false. */
  readonly requireKey?: boolean;
  /** HTTP answers to a key with a budget say `x-cascade-credits-remaining`; absent = false. */
  readonly creditsRemainingHeader?: boolean;
}

/** One `[[nodes]]` entry, validated and resolved. */
export interface NodeConfig {
  readonly name: string;
  /** The URL with env variables substituted. Carries secrets: never log it. */
  readonly url: string;
  /** The URL safe to print: env-derived parts and query values replaced by `***`. */
  readonly redactedUrl: string;
  /** `ws_url` with env variables substituted; undefined = derived from `url` (http→ws). */
  readonly wsUrl?: string | undefined;
  /** `ws_url` safe to print. */
  readonly redactedWsUrl?: string | undefined;
  /**
   * Headers sent on every request to the node (lower-case names, `$VAR`s expanded). The
   * values are secrets (API keys): never log them.
   */
  readonly headers: Readonly<Record<string, string>>;
  readonly tier: number;
  readonly rpsLimit: number;
  readonly maxConcurrent: number;
  /** Most connections open to the node; when all are busy the node counts as saturated. */
  readonly maxConnections: number;
  /** An idle pooled connection is not reused after this many ms. */
  readonly keepAliveMs: number;
  /** Credits per billing period; undefined = unmetered (`monthly_limit = 0`). */
  readonly monthlyLimit: number | undefined;
  /** Usage past which the node is skipped; Infinity when unmetered. */
  readonly spilloverThreshold: number;
  readonly resetDay: number;
  readonly pricing: PriceList;
  /** Seconds between head probes (`head_probe_seconds`); absent: never probed. */
  readonly headProbeSeconds?: number;
  /** The chain the node serves (`[[chains]]` name); absent: the one chain of a `[[nodes]]` config. */
  readonly chain?: string;
  /** The provider account it draws credits and limits from (`[[accounts]]` name); absent: none. */
  readonly account?: string;
  /** Most blocks per eth_getLogs for this node (over its price list's); absent: the list's. */
  readonly maxLogsBlockRange?: number;
  /** Most logs per eth_getLogs answer for this node; absent: the price list's. */
  readonly maxLogsResults?: number;
}

/** Name of the one chain of a config written with top-level `[[nodes]]`. */
export const DEFAULT_CHAIN = 'default';

/**
 * One chain served by the proxy (`[[chains]]`, or the implicit one of a `[[nodes]]` config):
 * where clients reach it and the settings of its own routing, cache and chain state.
 */
export interface ChainConfig {
  readonly name: string;
  /** URL paths the chain is served on (`/solana`); `/` for the implicit chain. */
  readonly paths: readonly string[];
  /** `Host` names (lower case, no port) whose `/` paths reach this chain. */
  readonly hosts: readonly string[];
  /** Lag settings and `expect_chain`; absent: the shipped defaults. */
  readonly lag?: ChainFields | undefined;
  /** Per-method strategies and write handling; absent: the shipped defaults. */
  readonly routing?: RoutingConfig | undefined;
  /** The chain's cache; absent: coalescing on, cache off. */
  readonly cache?: CacheConfig | undefined;
}

/**
 * A provider account (`[[accounts]]`): one credit pool and one rate limit billed across every
 * node (on every chain) that names it. A node admits work only when its account admits it too.
 */
export interface AccountConfig {
  readonly name: string;
  /** Credits per billing period; undefined = unmetered. */
  readonly monthlyLimit: number | undefined;
  readonly resetDay: number;
  /** Requests per second across the account's nodes; Infinity = no limit. */
  readonly rpsLimit: number;
  /** Requests in flight across the account's nodes; Infinity = no limit. */
  readonly maxConcurrent: number;
  readonly spilloverPercent: number;
  /** Usage past which every node of the account is skipped; Infinity when unmetered. */
  readonly spilloverThreshold: number;
}

/** The `[cluster]` table: several workers, and replicas sharing limits through Redis. */
export interface ClusterConfig {
  /** Worker processes sharing the listening port (1 = this process serves). */
  readonly workers: number;
  /** Where replicas share usage and limits; undefined = this machine only. Carries secrets. */
  readonly redisUrl: string | undefined;
  /** The Redis URL safe to print. */
  readonly redactedRedisUrl: string | undefined;
  /** Prefix of every Redis key (replicas of one proxy share it). */
  readonly keyPrefix: string;
  /** This replica's name among the members. */
  readonly replicaId: string;
  readonly syncIntervalMs: number;
  readonly redisTimeoutMs: number;
  readonly leaseTtlMs: number;
  /** Share of each limit kept once Redis is lost past the lease; undefined = split by members. */
  readonly fallbackFraction: number | undefined;
}

/** One `[cache.methods.NAME]` override; absent fields keep the shipped rule. */
export interface CacheMethodOverride {
  readonly cache?: 'forever' | 'final' | 'ttl' | 'never';
  readonly ttlMs?: number;
  readonly coalesce?: boolean;
}

/** The `[cache]` table, defaults applied. */
export interface CacheConfig {
  /** Answers that cannot change are kept and reused (false: coalescing only). */
  readonly enabled: boolean;
  /** In-flight coalescing of identical reads. */
  readonly coalesce: boolean;
  /** Memory bound of the stored answers (LRU eviction past it), bytes. */
  readonly maxBytes: number;
  /** Answers bigger than this are never stored, bytes. */
  readonly maxEntryBytes: number;
  /** TTL of the head-tracking rows, ms. */
  readonly ttlMs: number;
  /**
   * EVM only: also treat blocks this deep below the newest `eth_blockNumber` seen as final;
   * undefined = only the `finalized` block tag (the safe default).
   */
  readonly evmFinalityDepth: number | undefined;
  /** Send `x-cascade-cache: hit|coalesced|miss` on answers. */
  readonly responseHeader: boolean;
  /** Per-method overrides of the shipped policy. */
  readonly methods: ReadonlyMap<string, CacheMethodOverride>;
}

/** A complete, valid configuration. */
export interface Config {
  /** Absolute path of the balancer config file. */
  readonly path: string;
  readonly server: ServerConfig;
  readonly nodes: readonly NodeConfig[];
  /** Absent: one process, limits and usage in memory and quotas.json. */
  readonly cluster?: ClusterConfig | undefined;
  /** Per-method strategies and write handling; absent = the shipped defaults. */
  readonly routing?: RoutingConfig | undefined;
  /** The `[cache]` table; absent = coalescing on, cache off. */
  readonly cache?: CacheConfig | undefined;
  /** Client keys (`[[keys]]`, `keys_file`); absent = no keys, cascade is open. */
  readonly keys?: KeysConfig | undefined;
  /**
   * The chains served, when the config has `[[chains]]`; absent: one chain at `/` made of
   * `nodes`, `routing`, `cache` and `[server]`'s lag keys (config-chains.ts `chainsOf`).
   */
  readonly chains?: readonly ChainConfig[] | undefined;
  /** Provider accounts (`[[accounts]]`); absent = none. */
  readonly accounts?: readonly AccountConfig[] | undefined;
}

/** What the loader returns: never throws on bad input. */
export interface LoadResult {
  /** Present only when there are no errors. */
  readonly config: Config | undefined;
  /** The path it read (or tried to read). */
  readonly path: string;
  readonly errors: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
}

/** Formats a problem as one line: `file: path: message — hint`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.path ? `${problem.file}: ${problem.path}` : problem.file;
  return problem.hint
    ? `${where}: ${problem.message} — ${problem.hint}`
    : `${where}: ${problem.message}`;
}

/** How a method's nodes are ordered: cheapest tier first, or fastest measured first. */
export type RoutingStrategy = 'cost' | 'latency';

/** Every strategy, in the order help texts list them. */
export const ROUTING_STRATEGIES = ['cost', 'latency'] as const satisfies readonly RoutingStrategy[];

/** One method's routing policy. */
export interface MethodRouting {
  readonly strategy: RoutingStrategy;
  /** Reads: send a second attempt after this many ms without an answer; undefined = never. */
  readonly hedgeAfterMs: number | undefined;
  /** Writes: send to this many nodes at once (1 = one node at a time). */
  readonly broadcast: number;
}

/** The `[routing]` table, shipped defaults applied. */
export interface RoutingConfig {
  /** Strategy of every method not listed in `methods`. */
  readonly defaultStrategy: RoutingStrategy;
  /** Hedged attempts are at most this share of hedgeable requests (0 = never hedge). */
  readonly hedgeMaxShare: number;
  /** Methods handled as writes (shipped list unless `write_methods` replaces it). */
  readonly writeMethods: readonly string[];
  /** Per-method policies: the shipped ones with `[routing.methods]` over them. */
  readonly methods: ReadonlyMap<string, MethodRouting>;
}
