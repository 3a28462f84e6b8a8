import type { Clock } from '../clock.js';
import type { ClientKeys } from '../keys/client-keys.js';
import type { RolloverEvent } from '../quota/rollover.js';
import type { UsageLedger } from '../quota/usage-ledger.js';
import type { Topology } from '../routing/topology.js';
import { coordinatedNodes, type CountedUsage } from './coordinated-nodes.js';
import type { ShareTarget } from './redis-coordinator.js';

const NO_DEMAND = { rps: 0, concurrent: 0 } as const;

/**
 * This process's nodes as the Redis coordinator sees them (one process serving), and its
 * client keys' counters beside them: a key's demand and shares are its own limits', split
 * between the replicas exactly as a node's are.
 */
export function topologyTarget(
  topology: Topology,
  ledger: UsageLedger,
  clock: Clock,
  onRollover: (events: readonly RolloverEvent[]) => void,
  /** More counters to sync (client keys' usage, with their limits). */
  counted: () => readonly CountedUsage[] = () => [],
  keys?: ClientKeys,
): ShareTarget {
  return {
    nodes: () =>
      coordinatedNodes(
        topology.table.all.map((node) => node.config),
        ledger,
        clock.wallNow(),
        onRollover,
        counted(),
      ),
    takeDemand: (name) => topology.node(name)?.takeDemand() ?? keys?.takeDemand(name) ?? NO_DEMAND,
    applyShare: (name, rps, concurrent, perIp = Infinity) => {
      const node = topology.node(name);
      if (node !== undefined) node.setShare(rps, concurrent, clock.now());
      else keys?.applyShare(name, { rps, concurrent, perIp });
    },
  };
}
