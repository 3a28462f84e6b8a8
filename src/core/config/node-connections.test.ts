import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../../../test/support/config-files.js';
import { makeTempDir, type TempDir } from '../../../test/support/temp-dir.js';
import type { TomlFields } from '../../../test/support/toml.js';
import { loadConfig } from './load-config.js';
import { DEFAULT_KEEP_ALIVE_MS, DEFAULT_MAX_CONNECTIONS } from './node-section.js';
import type { LoadResult } from './types.js';

let temp: TempDir;
beforeEach(() => {
  temp = makeTempDir('cascade-config-');
});
afterEach(() => temp.cleanup());

function load(nodes: TomlFields[], prices: Record<string, string> = {}): LoadResult {
  temp.write({
    'config.toml': balancerToml({ nodes }),
    'prices/basic.toml': priceListToml(),
    ...prices,
  });
  return loadConfig({ cwd: temp.dir, configPath: 'config.toml', env: {} });
}

describe('loadConfig: a node’s connections', () => {
  it('defaults max_connections and keep_alive_ms', () => {
    const node = load([nodeFields('a')]).config!.nodes[0]!;
    expect([node.maxConnections, node.keepAliveMs]).toEqual([
      DEFAULT_MAX_CONNECTIONS,
      DEFAULT_KEEP_ALIVE_MS,
    ]);
  });

  it('reads both keys', () => {
    const node = load([nodeFields('a', { max_connections: 64, keep_alive_ms: 4000 })]).config!
      .nodes[0]!;
    expect([node.maxConnections, node.keepAliveMs]).toEqual([64, 4000]);
  });

  it.each([
    ['max_connections', 0, 'nodes[0].max_connections'],
    ['max_connections', 70_000, 'nodes[0].max_connections'],
    ['keep_alive_ms', -1, 'nodes[0].keep_alive_ms'],
    ['keep_alive_ms', 'soon', 'nodes[0].keep_alive_ms'],
  ])('refuses %s = %j, naming the key', (key, value, path) => {
    const result = load([nodeFields('a', { [key]: value })]);
    expect(result.config).toBeUndefined();
    expect(result.errors.map((e) => e.path)).toEqual([path]);
    expect(result.errors[0]!.hint).toBeTruthy();
  });
});

describe('loadConfig: every problem in one pass', () => {
  it('reports a missing price list of a node that has other problems too', () => {
    const result = load([
      nodeFields('a', { rps_limit: 0, provider_pricing_path: 'prices/missing.toml' }),
    ]);
    const found = result.errors.map((e) => `${e.path}: ${e.message}`);
    expect(found).toContain("nodes[0].rps_limit: RPS for node 'a' cannot be 0");
    expect(found.some((line) => line.includes('cannot read price list: file not found'))).toBe(
      true,
    );
  });

  it('reports a broken price list of a node whose URL is wrong', () => {
    const result = load(
      [nodeFields('a', { url: 'not a url', provider_pricing_path: 'prices/broken.toml' })],
      { 'prices/broken.toml': '[limits]\nspillover_percent = 0\n[routing]\n' },
    );
    expect(result.errors.map((e) => e.path).sort()).toEqual([
      'limits.spillover_percent',
      'nodes[0].url',
    ]);
  });
});
