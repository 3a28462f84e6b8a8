import { MethodRegistry } from '../../src/core/protocol/method-registry.js';
import type { NodeConfig, PriceList } from '../../src/core/config/types.js';
import { UNPRICED } from '../../src/core/config/types.js';

/** A shared registry for hand-built price lists. */
export const TEST_REGISTRY = new MethodRegistry();

/** A price list from a {method: credits} map, with an optional fallback. */
export function priceList(prices: Record<string, number>, unknownMethodCost?: number): PriceList {
  const named = new Map(
    Object.entries(prices).map(([name, cost]) => [name, { cost, source: 'routing' as const }]),
  );
  const table = new Uint32Array(TEST_REGISTRY.size).fill(unknownMethodCost ?? UNPRICED);
  for (const [name, cost] of Object.entries(prices)) table[TEST_REGISTRY.intern(name)] = cost;
  return {
    path: '/test/prices.toml',
    configuredPath: 'prices.toml',
    spilloverPercent: 95,
    unknownMethodCost,
    table,
    named,
  };
}

/** A node config with sensible test defaults. */
export function nodeConfig(overrides: Partial<NodeConfig> & { name: string }): NodeConfig {
  return {
    url: 'http://127.0.0.1:9',
    redactedUrl: 'http://127.0.0.1:9',
    headers: {},
    tier: 0,
    rpsLimit: Infinity,
    maxConcurrent: Infinity,
    maxConnections: 1024,
    keepAliveMs: 30_000,
    monthlyLimit: undefined,
    spilloverThreshold: Infinity,
    resetDay: 1,
    pricing: priceList({}, 1),
    ...overrides,
  };
}
