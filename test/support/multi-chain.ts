/**
 * cascade serving several chains (`[[chains]]`) from a TOML config written for the test, as
 * `cascade serve` loads it, in front of mock nodes (and whatever real nodes a test brings).
 * Each chain's nodes are mock nodes unless a node names its own `url`.
 */
import type { Clock } from '../../src/core/clock.js';
import { loadConfig } from '../../src/core/config/load-config.js';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import type { Cascade } from '../../src/core/service.js';
import { TEST_REGISTRY } from './node-config.js';
import { makeTempDir, type TempDir } from './temp-dir.js';
import { startTestCascade } from './test-cascade.js';

/** One node: TOML fields besides name/url/pricing; `url` set = not a mock. */
export interface ChainNodeSpec {
  readonly name: string;
  readonly url?: string;
  /** Extra TOML lines for the node table (tier, account, limits…). */
  readonly toml?: string;
}

/** One chain: its name, extra TOML lines (paths, hosts, lag keys…) and nodes. */
export interface ChainSpec {
  readonly name: string;
  readonly toml?: string;
  readonly nodes: readonly ChainNodeSpec[];
}

export interface MultiChain {
  readonly url: string;
  readonly cascade: Cascade;
  readonly mocks: Record<string, MockNode>;
  readonly temp: TempDir;
  readonly logs: string[];
  /** POSTs `body` to `path`; the answer's status, parsed JSON and headers. */
  post(path: string, body: unknown): Promise<{ status: number; json: unknown; headers: Headers }>;
  /** Stops cascade (the final quotas.json write) and keeps the mocks. */
  stopCascade(): Promise<void>;
  /**
   * Rewrites config.toml for `chains` (nodes among the started mocks, or with a `url`) and
   * `top`; `cascade.reload()` then reads it as SIGHUP does.
   */
  rewrite(chains: readonly ChainSpec[], top?: string): void;
  close(): Promise<void>;
}

/** The price list every node of these tests shares: 1 credit per call, any method. */
const PRICES =
  '[limits]\nspillover_percent = 100\nunknown_method_cost = 1\n[routing]\ngetBalance = 1\n';

/** The config text for `chains` (mock node URLs filled in). */
function configText(
  chains: readonly ChainSpec[],
  urls: Record<string, string>,
  top: string,
): string {
  const parts = ['[server]\nhost = "127.0.0.1"\nport = 0\nenable_metrics = true\n', top];
  for (const chain of chains) {
    parts.push(`[[chains]]\nname = "${chain.name}"\n${chain.toml ?? ''}`);
    for (const node of chain.nodes)
      parts.push(
        `[[chains.nodes]]\nname = "${node.name}"\nurl = "${node.url ?? urls[node.name]}"\nprovider_pricing_path = "prices.toml"\n${node.toml ?? 'tier = 0\nmonthly_limit = 0'}\n`,
      );
  }
  return parts.join('\n');
}

/** Starts mock nodes for every node without a url, then cascade on a config naming them. */
export async function startMultiChain(
  chains: readonly ChainSpec[],
  options: { readonly top?: string; readonly temp?: TempDir; readonly clock?: Clock } = {},
): Promise<MultiChain> {
  const temp = options.temp ?? makeTempDir('cascade-chains-');
  const mockSpecs = chains.flatMap((chain) => chain.nodes.filter((node) => node.url === undefined));
  const mockList = await startMockNodes(mockSpecs.map((node) => ({ name: node.name })));
  const mocks = Object.fromEntries(mockList.map((mock) => [mock.name, mock]));
  const urls = Object.fromEntries(mockList.map((mock) => [mock.name, mock.url]));
  temp.write({
    'config.toml': configText(chains, urls, options.top ?? ''),
    'prices.toml': PRICES,
  });
  const load = () =>
    loadConfig({ cwd: temp.dir, configPath: 'config.toml', env: {}, registry: TEST_REGISTRY });
  const start = async () => {
    const loaded = load();
    if (loaded.config === undefined) throw new Error(JSON.stringify(loaded.errors));
    return startTestCascade(loaded.config, {
      quotasPath: temp.path('quotas.json'),
      port: 0,
      reloadSource: load,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  };
  let { cascade, logs } = await start();
  const harness: MultiChain = {
    get url() {
      return `http://127.0.0.1:${cascade.server.port}`;
    },
    get cascade() {
      return cascade;
    },
    mocks,
    temp,
    get logs() {
      return logs;
    },
    async post(path, body) {
      const response = await fetch(`${harness.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      return {
        status: response.status,
        json: JSON.parse(text) as unknown,
        headers: response.headers,
      };
    },
    async stopCascade() {
      await cascade.close();
    },
    rewrite(next, top = options.top ?? '') {
      temp.write({ 'config.toml': configText(next, urls, top) });
    },
    async close() {
      await cascade.close();
      await Promise.all(mockList.map((mock) => mock.close()));
      if (options.temp === undefined) temp.cleanup();
    },
  };
  // Restarting on the same files is how the restart tests read quotas.json back.
  Object.assign(harness, {
    async restart() {
      await cascade.close();
      ({ cascade, logs } = await start());
    },
  });
  return harness;
}

/** Stops cascade and starts it again on the same config and quotas.json. */
export async function restartCascade(harness: MultiChain): Promise<void> {
  await (harness as MultiChain & { restart(): Promise<void> }).restart();
}
