import { serialize, deserialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { nodeFields, priceListToml } from '../../../test/support/config-files.js';
import { useConfigDir } from '../../../test/support/config-loading.js';
import { MethodRegistry } from '../protocol/method-registry.js';
import { rebindConfig } from './config-handoff.js';
import { priceOf } from './price-list.js';
import { UNPRICED, type Config } from './types.js';

const dir = useConfigDir();

/** What the IPC channel does to a message ('advanced' serialization is v8's structured clone). */
const overIpc = (config: Config): Config => deserialize(serialize(config)) as Config;

describe('a config handed to another process', () => {
  it('prices every method as in the process that loaded it, with that process’s own ids', () => {
    const loaded = dir.load(
      { nodes: [nodeFields('a'), nodeFields('b', { provider_pricing_path: 'prices/b.toml' })] },
      {
        prices: {
          'prices/b.toml': priceListToml({
            limits: { unknown_method_cost: 3 },
            routing: { getSlot: 2 },
            custom: { acme_special: 7 },
          }),
        },
      },
    ).config!;
    // The worker's registry has interned another custom name first: its ids differ.
    const registry = new MethodRegistry();
    registry.intern('other_custom');
    const rebound = rebindConfig(overIpc(loaded), registry);
    const [a, b] = rebound.nodes;
    expect(priceOf(a!.pricing, registry.idOf('getBalance'))).toBe(1);
    expect(priceOf(a!.pricing, registry.idOf('getSlot'))).toBe(UNPRICED);
    expect(priceOf(b!.pricing, registry.idOf('getSlot'))).toBe(2);
    expect(priceOf(b!.pricing, registry.idOf('acme_special'))).toBe(7);
    expect(priceOf(b!.pricing, registry.idOf('getBalance'))).toBe(3);
    expect(priceOf(b!.pricing, registry.idOf('other_custom'))).toBe(3);
  });

  it('keeps everything else as it was: limits, Maps, Infinity, secrets in URLs', () => {
    const loaded = dir.load({
      nodes: [nodeFields('a', { rps_limit: undefined, max_concurrent: undefined })],
      extra: '[cache]\n[cache.methods.getSlot]\ncache = "never"\n',
    }).config!;
    const rebound = rebindConfig(overIpc(loaded), new MethodRegistry());
    const { table: _a, ...before } = loaded.nodes[0]!.pricing;
    const { table: _b, ...after } = rebound.nodes[0]!.pricing;
    expect(after).toEqual(before);
    expect({ ...rebound, nodes: [] }).toEqual({ ...loaded, nodes: [] });
    expect(rebound.nodes[0]!.rpsLimit).toBe(Infinity);
    expect(rebound.cache?.methods.get('getSlot')).toEqual({ cache: 'never' });
  });

  it('leaves nodes that shared one price list sharing one', () => {
    const loaded = dir.load({ nodes: [nodeFields('a'), nodeFields('b')] }).config!;
    const [a, b] = rebindConfig(overIpc(loaded), new MethodRegistry()).nodes;
    expect(a!.pricing).toBe(b!.pricing);
  });
});
