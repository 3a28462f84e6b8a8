import type WebSocket from 'ws';
import { afterEach } from 'vitest';
import type {
  CacheConfig,
  Config,
  NodeConfig,
  ServerConfig,
  WsPrices,
} from '../../src/core/config/types.js';
import type { Clock } from '../../src/core/clock.js';
import type { KeysConfig } from '../../src/core/config/key-types.js';
import type { Cascade } from '../../src/core/service.js';
import type { WsTuning } from '../../src/core/ws/gateway-context.js';
import {
  MockChain,
  startMockNodes,
  type MockNode,
  type MockNodeOptions,
} from '../../src/mock/index.js';
import { makeTempDir, type TempDir } from './temp-dir.js';
import { WsTestClient } from './ws-client.js';
import { nodeConfig, priceList } from './node-config.js';
import { serverConfig } from './proxy-harness.js';
import { startTestCascade } from './test-cascade.js';

/** One node of a WebSocket test topology. */
export interface WsTestNode extends Partial<
  Omit<NodeConfig, 'pricing' | 'url' | 'redactedUrl' | 'chain'>
> {
  readonly name: string;
  readonly prices?: Record<string, number>;
  /** `[websocket]` prices; null = the node's list has no [websocket] table. Default: all 0. */
  readonly ws?: Partial<WsPrices> | null;
  readonly mock?: Omit<MockNodeOptions, 'name' | 'chain'>;
  /** The chain this node follows (e.g. one ahead of the others); default the shared one. */
  readonly chain?: MockChain;
  /** `user:password` written into the node URL (HTTP Basic auth, as some providers take it). */
  readonly userinfo?: string;
}

/** cascade (in-process, as `cascade serve` runs it) in front of mock nodes on a manual chain. */
export interface WsHarness {
  readonly cascade: Cascade;
  readonly mocks: Record<string, MockNode>;
  readonly chain: MockChain;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** ws://127.0.0.1:PORT (the main port) */
  readonly wsUrl: string;
  readonly logs: string[];
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Fast keep-alive and failover for tests: a stall is noticed on the third 50 ms tick. The
 * call and connect deadlines are generous: a loaded machine must not fail a healthy node.
 */
export const TEST_WS_TUNING: Partial<WsTuning> = {
  pingIntervalMs: 50,
  requestTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  idleCloseMs: 50,
  failoverBudgetMs: 3000,
  tickMs: 20,
};

/** Starts mock nodes (sharing one manual chain) and cascade in front of them. */
export async function startWsHarness(
  nodes: readonly WsTestNode[],
  options: {
    server?: Partial<ServerConfig>;
    tuning?: Partial<WsTuning>;
    /** The `[cache]` table; absent: none (the product default, coalescing on, nothing stored). */
    cache?: CacheConfig;
    /** Client keys (`[[keys]]`); absent: none, cascade is open. */
    keys?: KeysConfig;
    /** The service's clock (a ManualClock holds rate buckets still). */
    clock?: Clock;
    /** quotas.json (default: a fresh temp file): a restart test starts twice on one file. */
    quotasPath?: string;
    /** One log line per request in `logs` (--access-log). */
    accessLog?: boolean;
  } = {},
): Promise<WsHarness> {
  const chain = new MockChain({ manual: true });
  const mockList = await startMockNodes(
    nodes.map((node) => ({ name: node.name, chain: node.chain ?? chain, ...node.mock })),
  );
  const mocks = Object.fromEntries(mockList.map((mock) => [mock.name, mock]));
  const configs = nodes.map((node) => {
    const { prices, ws, mock: _mock, chain: _chain, userinfo, ...rest } = node;
    const base = priceList(prices ?? {}, 1);
    const websocket: WsPrices | undefined =
      ws === null
        ? undefined
        : { connection: 0, subscribe: 0, unsubscribe: 0, notification: 0, tenthMb: 0, ...ws };
    const plain = mocks[node.name]!.url;
    const url = userinfo === undefined ? plain : plain.replace('://', `://${userinfo}@`);
    const monthlyLimit = rest.monthlyLimit;
    const spilloverThreshold =
      monthlyLimit === undefined ? Infinity : Math.floor((monthlyLimit * 95) / 100);
    return nodeConfig({
      spilloverThreshold,
      ...rest,
      url,
      redactedUrl: url,
      pricing: { ...base, websocket },
    });
  });
  const config: Config = {
    path: '/test/config.toml',
    server: serverConfig(options.server),
    nodes: configs,
    ...(options.cache === undefined ? {} : { cache: options.cache }),
    ...(options.keys === undefined ? {} : { keys: options.keys }),
  };
  const temp: TempDir = makeTempDir('cascade-ws-');
  const { cascade, logs } = await startTestCascade(config, {
    quotasPath: options.quotasPath ?? temp.path('quotas.json'),
    wsTuning: { ...TEST_WS_TUNING, ...options.tuning },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.accessLog === undefined ? {} : { accessLog: options.accessLog }),
  });
  const port = cascade.server.port;
  return {
    cascade,
    mocks,
    chain,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    logs,
    metrics: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
    async close() {
      await cascade.close();
      await Promise.all(mockList.map((mock) => mock.close()));
      temp.cleanup();
    },
  };
}

/** One test's harness and WebSocket clients (see `useWsHarness`). */
export interface WsFixture {
  /** The harness `start` made (throws when the test has not started one). */
  readonly harness: WsHarness;
  /** Starts the test's harness (closed after the test). */
  start(...args: Parameters<typeof startWsHarness>): Promise<WsHarness>;
  /** Opens a client to the harness (or `url`), closed after the test. */
  open(url?: string, options?: WebSocket.ClientOptions): Promise<WsTestClient>;
}

/**
 * The WebSocket tests' shared fixture: registers the afterEach that closes every client the
 * test opened, then its harness.
 */
export function useWsHarness(): WsFixture {
  let current: WsHarness | undefined;
  const clients: WsTestClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await current?.close();
    current = undefined;
  });
  return {
    get harness(): WsHarness {
      if (current === undefined) throw new Error('no harness: call start() first');
      return current;
    },
    async start(...args) {
      current = await startWsHarness(...args);
      return current;
    },
    async open(url, options) {
      const client = await WsTestClient.open(url ?? this.harness.wsUrl, options);
      clients.push(client);
      return client;
    },
  };
}
