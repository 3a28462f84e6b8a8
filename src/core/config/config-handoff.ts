/**
 * A config checked by another process (the primary of `--workers`), made to work in this one.
 * Workers never read the config file: the primary reads and checks it once and hands the
 * parsed result over IPC (structured clone). All of it survives the trip except one thing —
 * a price list's table is indexed by the method ids of the process that compiled it, so each
 * table is rebuilt here from the list's named prices against this process's registry.
 */
import type { MethodRegistry } from '../protocol/method-registry.js';
import { UNPRICED, type Config, type NodeConfig, type PriceList } from './types.js';

/** `list`'s prices indexed by `registry`'s ids (custom names are interned as on a load). */
export function rebindPriceList(list: PriceList, registry: MethodRegistry): PriceList {
  for (const method of list.named.keys()) registry.intern(method);
  const table = new Uint32Array(registry.size).fill(list.unknownMethodCost ?? UNPRICED);
  for (const [method, { cost }] of list.named) table[registry.idOf(method)] = cost;
  return { ...list, table };
}

/**
 * `config` with every price list rebound to `registry`. Nodes that shared one list (one file)
 * still share one after it, as they do after a load.
 */
export function rebindConfig(config: Config, registry: MethodRegistry): Config {
  const rebound = new Map<PriceList, PriceList>();
  const nodes = config.nodes.map((node): NodeConfig => {
    let pricing = rebound.get(node.pricing);
    if (pricing === undefined) {
      pricing = rebindPriceList(node.pricing, registry);
      rebound.set(node.pricing, pricing);
    }
    return { ...node, pricing };
  });
  return { ...config, nodes };
}
