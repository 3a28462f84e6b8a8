/**
 * cascade (startCascade, as `cascade serve` runs it, on the real clock) in front of providers
 * the test started — for the eth_getLogs tests, logs-limit proxies in front of anvil — with its
 * admin listener, so every door (HTTP, batch, WebSocket) and `GET /admin/nodes` can be used.
 */
import type { KeysConfig } from '../../src/core/config/key-types.js';
import type { CacheConfig, Config, NodeConfig, ServerConfig } from '../../src/core/config/types.js';
import type { Cascade } from '../../src/core/service.js';
import { nodeConfig, priceList } from './node-config.js';
import { serverConfig } from './proxy-harness.js';
import { startTestCascade } from './test-cascade.js';
import { makeTempDir } from './temp-dir.js';

/** One node: where it is, and its config (prices: credits by method, every other method 1). */
export interface StageNode extends Partial<
  Omit<NodeConfig, 'name' | 'url' | 'redactedUrl' | 'pricing'>
> {
  readonly name: string;
  readonly url: string;
  readonly prices?: Record<string, number>;
}

export interface LogsStage {
  readonly cascade: Cascade;
  readonly url: string;
  readonly wsUrl: string;
  readonly admin: string;
  readonly logs: string[];
  metrics(): Promise<string>;
  /** POSTs `body` (JSON) to `path` (default `/`). */
  post(body: unknown, path?: string): Promise<{ status: number; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Applies `nodes` as a SIGHUP reload would (same names keep their state). */
  reload(nodes: readonly StageNode[]): void;
  close(): Promise<void>;
}

function configsOf(nodes: readonly StageNode[]): NodeConfig[] {
  return nodes.map(({ prices, url, ...rest }) => {
    const monthlyLimit = rest.monthlyLimit;
    const spilloverThreshold =
      monthlyLimit === undefined ? Infinity : Math.floor((monthlyLimit * 95) / 100);
    return nodeConfig({
      spilloverThreshold,
      ...rest,
      url,
      redactedUrl: url,
      pricing: priceList(prices ?? {}, 1),
    });
  });
}

/** Starts cascade in front of `nodes`. */
export async function startLogsStage(
  nodes: readonly StageNode[],
  options: { server?: Partial<ServerConfig>; keys?: KeysConfig; cache?: CacheConfig } = {},
): Promise<LogsStage> {
  const config: Config = {
    path: '/test/config.toml',
    server: serverConfig({
      adminPort: 0,
      requestTimeoutMs: 20_000,
      attemptTimeoutMs: 10_000,
      ...options.server,
    }),
    nodes: configsOf(nodes),
    ...(options.keys === undefined ? {} : { keys: options.keys }),
    ...(options.cache === undefined ? {} : { cache: options.cache }),
  };
  const temp = makeTempDir('cascade-logs-');
  let started: Awaited<ReturnType<typeof startTestCascade>>;
  try {
    started = await startTestCascade(config, { quotasPath: temp.path('quotas.json') });
  } catch (err) {
    temp.cleanup();
    throw err;
  }
  const { cascade, logs } = started;
  const url = `http://127.0.0.1:${cascade.server.port}`;
  return {
    cascade,
    url,
    wsUrl: `ws://127.0.0.1:${cascade.server.port}`,
    admin: `http://127.0.0.1:${cascade.adminPort}`,
    logs,
    metrics: async () => (await fetch(`${url}/metrics`)).text(),
    async post(body, path = '/') {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, json: await response.json() };
    },
    reload(next) {
      cascade.server.reload({ ...cascade.server.config, nodes: configsOf(next) });
    },
    async close() {
      try {
        await cascade.close();
      } finally {
        temp.cleanup();
      }
    },
  };
}
