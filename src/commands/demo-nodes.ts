import type { Config } from '../core/index.js';
import { startMockNodes, type MockNode } from '../mock/index.js';

/**
 * Latencies of the demo's mock nodes (ms): the six Solana ones like CascadeRPC's mock_node,
 * then the EVM chain's two.
 */
const DEMO_DELAYS = [3, 5, 7, 9, 12, 20, 4, 15];

/** Points the demo's nodes at freshly started in-process mock nodes. */
export async function withDemoNodes(
  config: Config,
): Promise<{ config: Config; mocks: MockNode[] }> {
  const specs = config.nodes.map((n, i) => ({
    name: n.name,
    port: 0,
    delayMs: DEMO_DELAYS[i] ?? 0,
  }));
  const mocks = await startMockNodes(specs);
  const nodes = config.nodes.map((n, i) => ({
    ...n,
    url: mocks[i]!.url,
    redactedUrl: mocks[i]!.url,
  }));
  return { config: { ...config, nodes }, mocks };
}
