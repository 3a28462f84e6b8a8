import type { Clock } from '../clock.js';
import type { AccountEntry } from '../config/config-chains.js';
import type { ClientKeys } from '../keys/client-keys.js';
import type { RolloverEvent } from '../quota/rollover.js';
import type { UsageLedger } from '../quota/usage-ledger.js';
import type { Topology } from '../routing/topology.js';
import { coordinatedNodes, type CountedUsage } from './coordinated-nodes.js';
import type { ShareTarget } from './redis-coordinator.js';

const NO_DEMAND = { rps: 0, concurrent: 0 } as const;

/**
 * This process's nodes and provider accounts as the Redis coordinator sees them (one process
 * serving), and its client keys' counters beside them: a key's demand and shares are its own
 * limits', split between the replicas exactly as a node's or an account's are.
 */
export function topologyTarget(
  topology: Topology,
  /** The provider accounts in force, as usage entries. */
  accounts: () => readonly AccountEntry[],
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
        [...topology.table.all.map((node) => node.config), ...accounts()],
        ledger,
        clock.wallNow(),
        onRollover,
        counted(),
      ),
    takeDemand: (name) =>
      topology.limited(name)?.takeDemand() ?? keys?.takeDemand(name) ?? NO_DEMAND,
    applyShare: (name, rps, concurrent, perIp = Infinity) => {
      const limited = topology.limited(name);
      if (limited !== undefined) limited.setShare(rps, concurrent, clock.now());
      else keys?.applyShare(name, { rps, concurrent, perIp });
    },
  };
}
