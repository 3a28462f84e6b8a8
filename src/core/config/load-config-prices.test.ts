/** loadConfig: the price lists the nodes name. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../../../test/support/config-files.js';
import { paths, useConfigDir } from '../../../test/support/config-loading.js';
import { loadConfig } from './load-config.js';

const { temp, load, loadNode } = useConfigDir();

describe('loadConfig: price lists', () => {
  it('names the resolved path of a missing price list', () => {
    const result = loadNode({ provider_pricing_path: 'prices/missing.toml' });
    expect(result.config).toBeUndefined();
    expect(result.errors).toEqual([
      {
        file: path.join(temp.dir, 'prices/missing.toml'),
        path: '',
        message: 'cannot read price list: file not found',
        hint: expect.stringContaining('is relative, so it is read from the working directory'),
      },
    ]);
  });

  it('reports a price list that is not valid TOML', () => {
    const result = load({}, { prices: { 'prices/basic.toml': '[routing]\ngetBalance = \n' } });
    expect(result.config).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]!.file).toBe(temp.path('prices/basic.toml'));
    expect(result.errors[0]!.message).toMatch(/^not valid TOML/);
  });

  it('loads a list shared by several nodes once and reports its problems once', () => {
    const ok = load({ nodes: [nodeFields('a'), nodeFields('b')] });
    expect(ok.config!.nodes[0]!.pricing).toBe(ok.config!.nodes[1]!.pricing);
    const broken = load(
      { nodes: [nodeFields('a'), nodeFields('b')] },
      { prices: { 'prices/basic.toml': priceListToml({ routing: null }) } },
    );
    expect(paths(broken.errors)).toEqual(['routing']);
  });

  it('resolves price list paths against cwd, not the config file', () => {
    temp.write({
      'nested/config.toml': balancerToml(),
      'prices/basic.toml': priceListToml(),
    });
    const result = loadConfig({ cwd: temp.dir, configPath: 'nested/config.toml', env: {} });
    expect(result.errors).toEqual([]);
    expect(result.config!.nodes[0]!.pricing.path).toBe(temp.path('prices/basic.toml'));
  });

  it('reports node errors and price list errors together', () => {
    const result = load(
      { nodes: [nodeFields('a'), nodeFields('b', { rps_limit: 0 })] },
      { prices: { 'prices/basic.toml': priceListToml({ limits: { spillover_percent: 0 } }) } },
    );
    expect(paths(result.errors).sort()).toEqual(['limits.spillover_percent', 'nodes[1].rps_limit']);
  });
});
