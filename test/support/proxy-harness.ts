import { pino } from 'pino';
import { Writable } from 'node:stream';
import type { Clock } from '../../src/core/clock.js';
import type {
  AccountConfig,
  CacheConfig,
  Config,
  NodeConfig,
  RoutingConfig,
  ServerConfig,
} from '../../src/core/config/types.js';
import { ProxyServer } from '../../src/core/http/server.js';
import { createPromMetrics } from '../../src/core/prom-metrics.js';
import { LocalUsageLedger } from '../../src/core/quota/usage-ledger.js';
import { startMockNodes, type MockNode, type MockNodeOptions } from '../../src/mock/index.js';
import { freePort } from './free-port.js';
import { TEST_REGISTRY, nodeConfig, priceList } from './node-config.js';

/** One node of a test topology: its config and its mock's behaviour. */
export interface TestNode extends Partial<Omit<NodeConfig, 'pricing' | 'url' | 'redactedUrl'>> {
  readonly name: string;
  readonly prices?: Record<string, number>;
  /** Price of methods not named; undefined = not served. Default 1. */
  readonly unknownCost?: number | null;
  readonly mock?: Omit<MockNodeOptions, 'name'>;
  /** Point the node at a dead port instead of a mock. */
  readonly dead?: boolean;
  /** Point the node at this URL (a real node, e.g. anvil) instead of a mock. */
  readonly upstream?: string;
}

/** A running proxy in front of mock nodes, for integration tests. */
export interface Harness {
  readonly url: string;
  readonly server: ProxyServer;
  readonly mocks: Record<string, MockNode>;
  readonly ledger: LocalUsageLedger;
  readonly logs: string[];
  post(
    body: unknown,
    path?: string,
  ): Promise<{ status: number; body: string; json: unknown; contentType: string | null }>;
  health(): Promise<{
    status: string;
    active_nodes: number;
    total_nodes: number;
    nodes: Array<{ name: string; status: string; latency_ms: number | null; tier: number }>;
  }>;
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The harness's `[cache]` unless a test passes its own: nothing cached, nothing coalesced.
 * Routing tests send identical requests at once and count what each one does; coalescing (on
 * by default in the product) would merge them. Tests of the cache pass `cache`.
 */
export const ROUTING_ONLY_CACHE: CacheConfig = {
  enabled: false,
  coalesce: false,
  maxBytes: 0,
  maxEntryBytes: 0,
  ttlMs: 400,
  evmFinalityDepth: undefined,
  responseHeader: false,
  methods: new Map(),
};

/** Builds the server section of a test config. */
export function serverConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    enableMetrics: true,
    maxBodyBytes: 2 * 1024 * 1024,
    quotasPath: 'quotas.json',
    maxBatchSize: 100,
    metricsPort: undefined,
    adminPort: undefined,
    quotaFlushSeconds: 60,
    requestTimeoutMs: 1000,
    attemptTimeoutMs: 500,
    corsOrigins: [],
    compressionMinBytes: 1024,
    keepAliveTimeoutMs: 5000,
    trustedProxies: [],
    adminHost: '127.0.0.1',
    adminTokenEnv: 'CASCADE_ADMIN_TOKEN',
    adminToken: undefined,
    routingHeaders: false,
    ...overrides,
  };
}

/** Starts mock nodes and a proxy in front of them. */
export async function startHarness(
  nodes: readonly TestNode[],
  options: {
    server?: Partial<ServerConfig>;
    budgetMs?: number;
    attemptTimeoutMs?: number;
    /** The proxy's clock (a ManualClock makes deadlines and waits move only when told). */
    clock?: Clock;
    /** One log line per request in `logs` (--access-log). */
    accessLog?: boolean;
    /** The `[routing]` section (default: the shipped strategies and write list). */
    routing?: RoutingConfig;
    /** The `[cache]` table (default ROUTING_ONLY_CACHE; `null`: no table, the product default). */
    cache?: CacheConfig | null;
    /** Provider accounts (`[[accounts]]`) the nodes' `account` names; default none. */
    accounts?: readonly AccountConfig[];
  } = {},
): Promise<Harness> {
  const live = nodes.filter((node) => !node.dead && node.upstream === undefined);
  const mockList = await startMockNodes(live.map((node) => ({ name: node.name, ...node.mock })));
  const mocks = Object.fromEntries(mockList.map((mock) => [mock.name, mock]));
  const configs: NodeConfig[] = [];
  for (const node of nodes) {
    const url =
      node.upstream ?? (node.dead ? `http://127.0.0.1:${await freePort()}` : mocks[node.name]!.url);
    const { prices, unknownCost, mock: _mock, dead: _dead, upstream: _upstream, ...rest } = node;
    const pricing = priceList(prices ?? {}, unknownCost === null ? undefined : (unknownCost ?? 1));
    const monthlyLimit = rest.monthlyLimit;
    const spilloverThreshold =
      monthlyLimit === undefined ? Infinity : Math.floor((monthlyLimit * 95) / 100);
    configs.push(nodeConfig({ spilloverThreshold, ...rest, url, redactedUrl: url, pricing }));
  }
  const config: Config = {
    path: '/test/config.toml',
    server: serverConfig(options.server),
    nodes: configs,
    routing: options.routing,
    ...(options.cache === null ? {} : { cache: options.cache ?? ROUTING_ONLY_CACHE }),
    ...(options.accounts === undefined ? {} : { accounts: options.accounts }),
  };
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const ledger = new LocalUsageLedger();
  const server = await ProxyServer.start({
    config,
    registry: TEST_REGISTRY,
    logger: pino({ level: 'info' }, sink),
    usage: ledger,
    version: '0.0.0-test',
    metrics: config.server.enableMetrics ? createPromMetrics({ version: '0.0.0-test' }) : undefined,
    budgetMs: options.budgetMs,
    attemptTimeoutMs: options.attemptTimeoutMs,
    clock: options.clock,
    accessLog: options.accessLog,
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    server,
    mocks,
    ledger,
    logs,
    async post(body, path = '/') {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return {
        status: response.status,
        body: text,
        json,
        contentType: response.headers.get('content-type'),
      };
    },
    async health() {
      const response = await fetch(`${url}/health`);
      return (await response.json()) as Awaited<ReturnType<Harness['health']>>;
    },
    async metrics() {
      return (await fetch(`${url}/metrics`)).text();
    },
    async close() {
      await server.close(100);
      await Promise.all(mockList.map((mock) => mock.close()));
    },
  };
}

/** A JSON-RPC request body. */
export function rpc(
  method: string,
  id: unknown = 1,
  params: unknown[] = [],
): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params };
}
